/** A request body that cannot be read as the JSON it claims to be (bad UTF-8, absurd nesting): 400, as FastAPI. */
export class MalformedBodyError extends Error {
  constructor() {
    super("There was an error parsing the body");
    this.name = "MalformedBodyError";
  }
}
