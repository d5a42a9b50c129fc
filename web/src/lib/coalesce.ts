// Runs a refresh at most once per burst of events: calls within `ms` of each other merge.

/** Returns a trigger that calls `run` once, `ms` after the last of a burst of calls. */
export function coalesce(run: () => void, ms: number): { (): void; cancel(): void } {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const trigger = () => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      run();
    }, ms);
  };
  trigger.cancel = () => {
    if (timer) clearTimeout(timer);
    timer = null;
  };
  return trigger;
}
