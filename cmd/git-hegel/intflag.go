package main

import (
	"strconv"

	"github.com/spf13/pflag"
)

// decimalInt is an integer option read as git reads its own: in decimal
// only. pflag's int takes 0x, 0o and 0b prefixes too, so --port 0x50
// listened on port 80 and -n 010 showed 8 runs.
type decimalInt int

func (d *decimalInt) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return err // a *strconv.NumError, which invalidValue words
	}
	*d = decimalInt(n)
	return nil
}

func (d *decimalInt) String() string { return strconv.Itoa(int(*d)) }

// Type is pflag's "int", so GetInt reads it as it reads an int option.
func (d *decimalInt) Type() string { return "int" }

// intFlag defines an integer option read in decimal only (decimalInt).
func intFlag(fs *pflag.FlagSet, name, short string, def int, usage string) {
	v := decimalInt(def)
	fs.VarP(&v, name, short, usage)
}
