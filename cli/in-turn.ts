// One at a time: the reads a front end makes for events (the MCP resource subscriptions, the
// dashboard's hub) run in the order the events came, each once the one before has finished.
// Bus operations are asynchronous: without this, two handlers' reads could interleave, and an
// older read overwrite a newer one, or one new chunk be told twice.

export type Turns = <T>(task: () => Promise<T>) => Promise<T>;

// turns()(task) starts `task` once every task given before it has settled, and settles as it
// does; a task that fails does not stop the ones after it.
export function turns(): Turns {
  let last: Promise<unknown> = Promise.resolve();
  return (task) => {
    const p = last.then(task);
    last = p.catch(() => {});
    return p;
  };
}
