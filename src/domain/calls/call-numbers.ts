import { parsePhoneNumberFromString } from "libphonenumber-js/max";
import { valueError } from "../shared/errors.js";
import type { ProjectConfig } from "../projects/project-config.js";

/**
 * The callee in E.164. E.164 or any international format is accepted ("+1 (415) 555-2671", "0044 20 7946 0958"),
 * and so are bare digits that start with the country code ("14155552671"). Validity is checked against the full
 * numbering-plan metadata, so a number of the wrong length or in an unassigned range is refused.
 */
export function normalizeCallee(callee: string, loc: (string | number)[] = ["body", "callee"]): string {
  const text = callee.trim();
  const international = text.startsWith("+") ? text : text.startsWith("00") ? `+${text.slice(2)}` : /^\d/.test(text) ? `+${text}` : text;
  const parsed = parsePhoneNumberFromString(international);
  if (!parsed || !parsed.isValid()) {
    throw valueError(loc, "invalid phone number: use E.164 (+14155552671) or an international number with its country code", callee);
  }
  return parsed.number;
}

export interface CallerLine {
  accountId: string;
  fromNumber: string;
}

/**
 * The number a phone call is made from. A project with one phone number uses it; with several, the request names
 * the voice provider account, and that account's first number is used. An account id that is not one of the
 * project's is a 422 at the field (the account is a value of the project's configuration, not a resource of the
 * interface, so it is not a 404); so is a project without any phone number.
 */
export function callerLineFor(voice: ProjectConfig["voice"], projectId: string, accountId: string | undefined): CallerLine {
  const withNumbers = voice.accounts.filter((account) => account.phone_numbers.length > 0);
  if (accountId !== undefined) {
    const account = withNumbers.find((candidate) => candidate.id.toLowerCase() === accountId.toLowerCase());
    if (!account) throw valueError(["body", "voice_provider_account_id"], "not a voice provider account of this project", accountId);
    return { accountId: account.id, fromNumber: account.phone_numbers[0]! };
  }
  const numbers = withNumbers.flatMap((account) => account.phone_numbers.map((number) => ({ accountId: account.id, fromNumber: number })));
  const [only] = numbers;
  if (!only) throw valueError(["body", "project_id"], "the project has no voice provider account with a phone number", projectId);
  if (numbers.length > 1) {
    throw valueError(["body", "voice_provider_account_id"], "required: the project has several phone numbers, name the account to call from", null);
  }
  return only;
}
