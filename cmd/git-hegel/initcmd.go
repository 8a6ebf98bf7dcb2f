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
	did, err := r.Init()
	if err != nil {
		return err
	}
	if len(did) == 0 {
		fmt.Fprintln(c.Stdout, "Already initialised; nothing to do")
		return nil
	}
	for _, line := range did {
		fmt.Fprintln(c.Stdout, line)
	}
	fmt.Fprintln(c.Stdout, "Workflow files in .hegel/workflows/ can be committed; .hegel/state.json is ignored by git.")
	return nil
}
