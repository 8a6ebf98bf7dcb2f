package rollback

import (
	"github.com/git-hegel/git-hegel/engine/text"
)

// quotePath names a path in a message as git does (text.QuotePath, with
// git's default core.quotePath): a name holding a newline or a control
// byte cannot break the message's one line. Warnings use the command's own
// setting instead (Options.QuotePath).
func quotePath(p string) string { return text.QuotePath(p, true) }
