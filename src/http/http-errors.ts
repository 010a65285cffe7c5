import { nulRefusal } from "../domain/shared/storable-text.js";

/** A request body that cannot be read as the JSON it claims to be (bad UTF-8, absurd nesting): 400, as FastAPI. */
export class MalformedBodyError extends Error {
  constructor() {
    super("There was an error parsing the body");
    this.name = "MalformedBodyError";
  }
}

/**
 * A path id holding U+0000, which no stored id can hold: 400 with the database's refusal, decided at the
 * edge so that a route that answers "not found" without asking the database agrees with one that asks.
 */
export class UnstorableTextError extends Error {
  constructor() {
    super(nulRefusal);
    this.name = "UnstorableTextError";
  }
}
