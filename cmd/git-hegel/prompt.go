package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// confirm asks question on stdout and reads one answer line from stdin: y
// or yes (any case) agrees, anything else declines. End of input without an
// answer is an error, since nobody could have agreed.
func (c *cmdCtx) confirm(question, verb string) (bool, error) {
	fmt.Fprint(c.Stdout, question)
	var line string
	var err error
	if c.Stdin != nil {
		line, err = bufio.NewReader(c.Stdin).ReadString('\n')
	} else {
		err = io.EOF
	}
	noAnswer := err != nil && (!errors.Is(err, io.EOF) || line == "")
	if noAnswer || !c.inputIsTerminal() {
		// Nothing was echoed after the question: end its line.
		fmt.Fprintln(c.Stdout)
	}
	if noAnswer {
		if errors.Is(err, io.EOF) {
			return false, fmt.Errorf("No answer on standard input; nothing was changed (answer y on a terminal, or use -y to %s without asking)", verb)
		}
		return false, fmt.Errorf("cannot read the answer: %v", err)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

// inputIsTerminal reports whether stdin is a terminal, which echoes what
// the user types.
func (c *cmdCtx) inputIsTerminal() bool {
	w, ok := c.Stdin.(io.Writer) // *os.File is both
	return ok && c.Terminal != nil && c.Terminal(w)
}
