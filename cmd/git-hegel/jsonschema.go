package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/pflag"
)

// --json prints schema 1, --json=2 schema 2 (docs/json.md, "Schema 2").
// Schema 1 only ever gains fields; schema 2 holds the fixes that would
// break a program reading schema 1: snake_case and units in the key names
// everywhere, the task under "task" in every command. A program picks the
// schema it was written for, so neither changes under it.
const (
	jsonSchemaVersion = 1 // what plain --json prints
	jsonSchemaLatest  = 2
)

// jsonValue is --json's value: 0 (not given), or the schema asked for.
// It reads as a bool for pflag and for c.boolFlag("json"), so --json
// needs no value and --json=true still works.
type jsonValue struct{ schema int }

func (v *jsonValue) String() string   { return strconv.FormatBool(v.schema > 0) }
func (v *jsonValue) Type() string     { return "bool" }
func (v *jsonValue) IsBoolFlag() bool { return true }

func (v *jsonValue) Set(s string) error {
	if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= jsonSchemaLatest {
		v.schema = n
		return nil
	}
	switch b, err := strconv.ParseBool(s); {
	case err != nil:
		return fmt.Errorf("takes a schema, 1 or %d, not '%s'", jsonSchemaLatest, s)
	case b:
		v.schema = jsonSchemaVersion
	default:
		v.schema = 0
	}
	return nil
}

// jsonFlag is --json[=SCHEMA] with the usual help text.
func jsonFlag(fs *pflag.FlagSet) { jsonFlagSaying("print JSON")(fs) }

// jsonFlagSaying is --json with its own help text (what is printed, where
// the schema is documented when not in docs/json.md).
func jsonFlagSaying(what string) func(*pflag.FlagSet) {
	return func(fs *pflag.FlagSet) {
		schema := "docs/json.md"
		fs.Var(&jsonValue{}, "json", fmt.Sprintf("%s (schema 1; --json=2: schema 2; see %s)", what, schema))
		fs.Lookup("json").NoOptDefVal = "true"
	}
}

// jsonSchema is the schema --json asked for, 0 without --json.
func (c *cmdCtx) jsonSchema() int {
	if f := c.flags.Lookup("json"); f != nil {
		if v, ok := f.Value.(*jsonValue); ok {
			return v.schema
		}
	}
	return 0
}

// ptr is &v, for the fields only one schema has (nil leaves them out).
func ptr[T any](v T) *T { return &v }
