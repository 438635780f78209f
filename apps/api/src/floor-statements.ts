// The statements two reads make per answer, with their values, for the bench's database floor: an
// express app that makes the same round trip through node-postgres before answering fixed bytes,
// i.e. what any server of this schema pays at least for the answer on the same machine.
export { generationQuery } from './modules/generations/generations.service.js';
export { keysPageQuery } from './modules/keys/keys.service.js';
