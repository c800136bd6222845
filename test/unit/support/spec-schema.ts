/** The JSON Schema keywords a tool's input spec uses, as the tests that generate arguments from one read it. */
export type SpecSchema = {
  type?: string | string[];
  properties?: Record<string, SpecSchema>;
  required?: string[];
  items?: SpecSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: SpecSchema[];
  oneOf?: SpecSchema[];
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
};

/** A schema's type; a nullable one's other type (`["string", "null"]` is a string). */
export function typeOf(schema: SpecSchema): string | undefined {
  return Array.isArray(schema.type) ? schema.type.find((type) => type !== "null") : schema.type;
}
