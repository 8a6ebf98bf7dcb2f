package main

import "fmt"

func runInit(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 0); err != nil {
		return err
	}
	r, err := c.openRepo()
	if err != nil {
		return err
	}
	created, err := r.Init()
	if err != nil {
		return err
	}
	if len(created) == 0 {
		fmt.Fprintln(c.Stdout, "Already initialised; nothing to do")
		return nil
	}
	for _, p := range created {
		fmt.Fprintf(c.Stdout, "Created %s\n", p)
	}
	fmt.Fprintln(c.Stdout, "Workflow files in .hegel/workflows/ can be committed; .hegel/state.json is ignored by git.")
	return nil
}
