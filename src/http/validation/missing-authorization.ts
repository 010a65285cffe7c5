import type { ValidationIssue } from "../../domain/shared/validation-issue.js";

/** FastAPI's 422 item for a required `Authorization` header that was not sent. */
export const missingAuthorization: ValidationIssue = { type: "missing", loc: ["header", "authorization"], msg: "Field required", input: null };
