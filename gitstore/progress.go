package gitstore

// Progress is told how far long work has got (files scanned, objects
// written, objects received), for a display like git's progress lines
// ("Receiving objects:  45% (450/1000)"). The work is done in phases, one
// at a time: Start, any number of Add and AddBytes (from any goroutine),
// Done. Whether and when anything is shown is the display's business;
// the code doing the work only counts.
type Progress interface {
	// Start begins a phase: title names what is counted ("Scanning
	// files"), total how many there will be (0 when not known).
	Start(title string, total int)
	// Add counts n more items of the phase done.
	Add(n int)
	// AddBytes counts n more bytes moved (shown beside the count).
	AddBytes(n int)
	// Done ends the phase.
	Done()
}

// NoProgress shows nothing: the Progress of code nobody watches.
var NoProgress Progress = noProgress{}

type noProgress struct{}

func (noProgress) Start(string, int) {}
func (noProgress) Add(int)           {}
func (noProgress) AddBytes(int)      {}
func (noProgress) Done()             {}

// OrNoProgress returns p, or NoProgress when p is nil.
func OrNoProgress(p Progress) Progress {
	if p == nil {
		return NoProgress
	}
	return p
}
