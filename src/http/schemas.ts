import { Type, type TSchema } from "@sinclair/typebox";

/** Response and parameter schemas shared by several routes. */
export const Detail = Type.Object({ detail: Type.String() }, { description: "Error" });

export const ValidationErrorBody = Type.Object(
  {
    detail: Type.Array(
      Type.Object({
        type: Type.String(),
        loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
        msg: Type.String(),
        input: Type.Unknown(),
        ctx: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      }),
    ),
  },
  { description: "Validation Error" },
);

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/**
 * A timestamp field: a string in the request and the OpenAPI document, a Date once validated (the validator parses
 * `date-time` and `date-or-date-time` strings as pydantic does), and typed as such.
 */
export const DateTimeField = (options: { format: "date-time" | "date-or-date-time"; description: string }) =>
  Type.Unsafe<Date>(Type.String(options));

export const ThreadIdParams = Type.Object({ thread_id: Type.String({ maxLength: 200 }) });

/** The documented error responses every authenticated route can give. */
export function withErrors(success: Record<number, TSchema>, extra: number[] = []): Record<number, TSchema> {
  const responses: Record<number, TSchema> = { ...success, 401: Detail, 403: Detail, 422: ValidationErrorBody };
  for (const status of extra) responses[status] = Detail;
  return responses;
}
