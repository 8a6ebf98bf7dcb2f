package gitstore

import (
	"crypto/sha1"
	"encoding/hex"
)

// ChainCacheFile is where the cache of the objects of the checkpoint
// chain at ref is kept (package rollback writes and reads it), relative
// to the common git directory, slash-separated. It is disposable.
func ChainCacheFile(ref string) string {
	sum := sha1.Sum([]byte(ref))
	return "hegel/chain-cache/" + hex.EncodeToString(sum[:])
}

// ChainSummaryFile is where the summary of the checkpoint chain at ref
// (the ids and counts an append needs) is kept, beside its cache;
// disposable too.
func ChainSummaryFile(ref string) string {
	return ChainCacheFile(ref) + ".summary"
}

// dropChainCache removes the chain cache and summary of ref, when its
// chain goes.
func (r *Repo) dropChainCache(ref string) {
	_ = r.common.Remove(ChainCacheFile(ref))
	_ = r.common.Remove(ChainSummaryFile(ref))
}
