// Package rollback is the worktree mechanism: it snapshots a working
// tree, its index and HEAD, keeps the snapshots in commit chains, and
// restores them. It owns
//
//   - snapshots: a scan that trusts the index's stat data and hashes only
//     what changed, stored as trees sharing every unchanged object;
//   - chains of snapshots under a ref (Manager.Chain), with FIFO bounds
//     whose evictions re-root the chain so git gc reclaims what they held,
//     and the union of two clones' chains;
//   - content-derived snapshot ids, and this clone's local record of the
//     snapshots it took, which tells them from ones fetched or forged;
//   - restore: plan, safety snapshot and journal, HEAD and branches,
//     files (through git's conversions), index, the chain cut back, and
//     replaying a restore cut short forwards or backwards;
//   - parking uncommitted files with a stash and writing them back, both
//     journaled the same way;
//   - its own index codec, and the path safety every tree it writes from
//     is checked against.
//
// It knows nothing of workflows, tasks or nodes: what a caller records
// with a snapshot or a restore is a Meta, stored beside the mechanism's
// fields and handed back unread. It must not import package engine or its
// sub-packages; the engine decides and records, and talks to this package
// through the interfaces it defines (engine.Snapshots, engine.Parking),
// which cmd/git-hegel/worktree implements with it.
//
// It imports go-git (its object storage, tree and index types) and
// gitstore (objects, refs, locks), and runs the git binary: git
// check-attr, git checkout-index and git hash-object for files git
// converts on checkout, and git in submodules. docs/rollback.md describes
// the behaviour, the storage format and the measurements behind the
// design; docs/architecture.md where it sits; layers_test.go keeps the
// imports so.
package rollback
