package command

import (
	"context"
	"errors"
	"testing"

	"github.com/spf13/cobra"
)

// CheckedRunE checks the arguments first: a failed check reaches neither
// the test's runF nor the command's run; a passed one hands the options on
// as RunE does.
func TestCheckedRunE(t *testing.T) {
	type opts struct{ arg string }
	bad := errors.New("bad argument")
	check := func(_ *cobra.Command, args []string) error {
		if args[0] == "bad" {
			return bad
		}
		return nil
	}
	for _, tc := range []struct {
		name, arg string
		withRunF  bool
		want      error
		wantBy    string
	}{
		{name: "check fails", arg: "bad", withRunF: true, want: bad},
		{name: "check fails, no runF", arg: "bad", want: bad},
		{name: "runF given", arg: "ok", withRunF: true, wantBy: "runF"},
		{name: "no runF", arg: "ok", wantBy: "run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &opts{arg: tc.arg}
			var by string
			called := func(name string) func(context.Context, *opts) error {
				return func(_ context.Context, got *opts) error {
					if got != o {
						t.Errorf("%s got options %p, want %p", name, got, o)
					}
					by = name
					return nil
				}
			}
			var runF func(context.Context, *opts) error
			if tc.withRunF {
				runF = called("runF")
			}
			cmd := &cobra.Command{}
			cmd.SetContext(context.Background())
			err := CheckedRunE(check, o, runF, called("run"))(cmd, []string{tc.arg})
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if by != tc.wantBy {
				t.Errorf("called %q, want %q", by, tc.wantBy)
			}
		})
	}
}
