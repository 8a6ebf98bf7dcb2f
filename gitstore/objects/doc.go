// Package objects is git-hegel's object layer: the one place git objects
// are read and written. It owns the object database (loose objects in
// git's format, its own mapped reader of packs and their indexes,
// alternates, freshening instead of rewriting, retries where git's own
// maintenance runs beside it), the pack writer of batches and fetches,
// the tree codec, the commit header parser, the go-git storage adapter
// that lets go-git's helpers read through it, and the rules for files in
// the git dir: core.fsync (Durability) and core.sharedRepository
// (SharedPerm), which the layers above use for their own files too.
//
// It imports go-git for its plumbing types, pack and index codecs and
// storage interfaces (not go-billy: it works on OS paths), gitdir for the
// configuration it reads, and engine for one sentinel: a missing object
// wraps engine.ErrNotFound, the storage contract's "does not exist" that
// the stores and the engine match. Nothing in it knows refs, documents or
// tasks.
package objects
