// The AWS SDK warns, in every process that makes one of its clients on Node 20, that its releases
// after the first week of January 2027 require Node 22: once per server, test worker and CLI run,
// so the test output repeats it over and over. Importing this module (before any client is made)
// turns that warning off through the SDK's documented switch, unless the environment already sets
// it either way; the server says the same once in its start log instead (main.ts).
const SWITCH = 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED';

/** Whether the SDK's own warning was turned off here, on a Node it would have warned on: the server then says it once itself. */
export const AWS_SDK_NOTICE_DUE: boolean = (() => {
  if (process.env[SWITCH] !== undefined) return false;
  process.env[SWITCH] = 'true';
  return Number(process.versions.node.split('.')[0]) < 22;
})();

export const AWS_SDK_NOTICE = `Node ${process.versions.node}: the AWS SDK's releases after the first week of January 2027 require Node 22 (Node 20 is past its end of life upstream: prefer Node 22; docs/deployment.md)`;
