package refs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/git-hegel/git-hegel/gitstore/objects"
)

// BenchmarkLockCycle takes and releases a ref lock: with a marker file of
// its own per lock (temp file linked to the lock's name), and as a link to
// the process's owner file (lockowner_file.go).
//
//	go test -run '^$' -bench BenchmarkLockCycle -benchtime 2000x ./gitstore/
func BenchmarkLockCycle(b *testing.B) {
	for _, mode := range []string{"marker-file", "owner-link"} {
		b.Run(mode, func(b *testing.B) {
			dir := b.TempDir()
			lock := filepath.Join(dir, "refs", "hegel", "x.lock")
			if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
				b.Fatal(err)
			}
			var own *OwnerFile
			if mode == "owner-link" {
				own = &OwnerFile{dir: filepath.Join(dir, ownersDir)}
				defer own.close()
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := CreateLock(own, lock, objects.SharedPerm{}); err != nil {
					b.Fatal(err)
				}
				if err := os.Remove(lock); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
