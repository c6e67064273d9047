// Package cmdutil is what every command of the command layer shares to
// declare its flags and to show its help: the groups of flags (FlagGroup)
// and the usage text that lists them in their groups (Usage), and the bash
// completion script (GenBashCompletion), as cli/cli keeps pkg/cmdutil apart
// from its verbs.
//
// It imports cobra and pflag, and nothing of mcpi: never the command
// layer, whose verbs use it.
package cmdutil
