// One change per burst of file events: editors write a file in several steps (a temporary file, a
// rename), so events within `quietMs` are one change. Shared by `npm start`'s catalog and
// .dev.vars watchers.
import { watch } from "node:fs";

/**
 * Calls `onChange` once for each burst of events in any of `folders` on a file `accepts` takes (an
 * event without a file name counts). Returns a function that stops watching.
 *
 * @param {string[]} folders
 * @param {(file: string) => boolean} accepts
 * @param {() => void} onChange
 * @param {number} quietMs
 */
export function watchQuietly(folders, accepts, onChange, quietMs) {
  let timer = null;
  const watchers = folders.map((folder) =>
    watch(folder, (_event, file) => {
      if (file !== null && !accepts(String(file))) return;
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => {
        timer = null;
        onChange();
      }, quietMs);
    }),
  );
  return () => {
    if (timer) clearTimeout(timer);
    for (const watcher of watchers) watcher.close();
  };
}
