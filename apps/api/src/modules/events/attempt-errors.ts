// Why a delivery attempt failed, in words a destination's status may show (never a secret: no URL,
// no header, no credential). Shared by delivery.ts and the trace senders, which it loads only when a
// trace is first sent.

/** A failed attempt: retried on the schedule. */
export class AttemptFailed extends Error {}

/** An attempt that no retry can make succeed (a trace whose generation is gone): the delivery is dead at once. */
export class Undeliverable extends AttemptFailed {}
