// What a running server holds open (pools, listeners, workers, timers), each registered with its
// close as soon as it is open. Closing runs those closes last-opened first, so that whatever was
// built on a resource is gone before the resource itself: one order for a normal stop and for a
// start that failed halfway, instead of two written out by hand. (Node 20 has no
// AsyncDisposableStack; this is the part of it the server needs.)

type Close = () => unknown;

export class Resources {
  #closes: Close[] = [];
  #closing: Promise<void> | undefined;

  /** Registers `close` for `resource`, just opened, and returns the resource. */
  hold<T>(resource: T, close: (resource: T) => unknown): T {
    this.#closes.push(() => close(resource));
    return resource;
  }

  /** Registers a close that belongs to no single value (a drain, a flush). */
  defer(close: Close): void {
    this.#closes.push(close);
  }

  /**
   * Runs every close once, last registered first, each after the one before has settled; a close
   * that fails does not keep the others from running. Rejects with the first failure once all ran.
   * Called again, it answers the same promise.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      let failure: { error: unknown } | undefined;
      for (const close of this.#closes.splice(0).reverse()) {
        try {
          await close();
        } catch (error) {
          failure ??= { error };
        }
      }
      if (failure) throw failure.error;
    })();
    return this.#closing;
  }
}
