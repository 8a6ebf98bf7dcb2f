// Package rollback keeps checkpoints of a working tree and restores them:
// fast snapshots of the index and the working tree (stat data first,
// hashing only what changed), stored as commit chains under
// refs/hegel/checkpoints/<task> with a FIFO bound that leaves evicted
// snapshots to git gc, and rollbacks that take a safety checkpoint, write
// a journal, and then move HEAD, the files and the index, refusing any
// checkpoint path that could reach outside the working tree.
//
// The engine decides (which node, the loop guard, the task's history);
// this package moves the files. docs/rollback.md describes the commands,
// the storage format and the measurements behind the design.
package rollback
