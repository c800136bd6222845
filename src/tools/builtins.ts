import * as z from "zod";
import { type BuiltinHandler, defineBuiltinTool, type ToolSpec } from "../catalog/define-tool";
import { lazily } from "../core/lazily";

export const ResultPageSchema = z.object({
  handle: z.string(),
  cursor: z.number().int(),
  next_cursor: z.number().int().nullable(),
  total_pages: z.number().int(),
  list_path: z.string().nullable(),
  items: z.array(z.unknown()).optional(),
  text: z.string().optional(),
  /** Set on a piece of one list item too large for a page: its index; consecutive pieces join into its JSON. */
  item: z.number().int().optional(),
});
export type ResultPage = z.infer<typeof ResultPageSchema>;

/** read_result_page's handler: one stored page, or which argument names nothing of this run. */
const servePage: BuiltinHandler = (args, pages) => {
  const handle = String(args.handle);
  const cursor = typeof args.cursor === "number" ? args.cursor : 0;
  const page = pages.page(handle, cursor);
  if (page) return { ok: true, data: page };
  return {
    ok: false,
    failure: {
      code: "not_found",
      message: `No page ${cursor} of result ${handle} in this run. Use a handle this run returned and a cursor below its page count.`,
      problems: [
        {
          field: "handle",
          reason: "unknown handle or cursor",
          hint: "Handles belong to one run and expire with it.",
        },
      ],
    },
  };
};

/** read_result_page's arguments: the same in every namespace, so built once, on the catalog's first load. */
const pageInput = lazily(() =>
  z.strictObject({
    handle: z
      .string()
      .regex(/^res_[0-9a-f]{24}$/, "a handle looks like res_ followed by 24 hex digits")
      .describe("The handle from the earlier result, such as res_0123456789abcdef01234567."),
    cursor: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe("Which page, from 0; use the next_cursor of the previous page. Defaults to 0."),
  }),
);

/** A built-in read tool in every namespace: pages through a result too large to return inline. */
export function readResultPage(namespace: string): ToolSpec {
  return defineBuiltinTool(
    {
      name: "read_result_page",
      namespace,
      version: "1",
      title: "Read a page of a large result",
      description: {
        does: "Returns one page of a result that was too large to return at once, by its handle.",
        use_when:
          "An earlier call returned a summary and a handle instead of the full data, e.g. read_result_page({handle: 'res_0123abcd', cursor: 0}); then follow next_cursor.",
        avoid_when:
          "The data you need is already in the summary's first items. Do not page through everything by habit.",
        side_effects: "None. Pages are kept with the run and disappear when its data expires.",
      },
      input: pageInput(),
      output: ResultPageSchema,
      timeout_ms: 1_000,
      // A page may hold another tool's third-party text (fenced when it was stored): not a closed world.
      open_world: true,
      trusted_text: {
        handle: "a handle the ledger mints",
        list_path: "a path into the stored result, from the tool's own schema",
        text: "a page of a result that was masked and fenced before it was stored",
      },
    },
    servePage,
  );
}
