package command

import (
	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/cmdutil"
)

// The groups of flags a command's help shows (cmdutil.FlagGroups), by the
// names the verbs use.
const (
	GroupArgs       = cmdutil.GroupArgs
	GroupLoad       = cmdutil.GroupLoad
	GroupOutput     = cmdutil.GroupOutput
	GroupSession    = cmdutil.GroupSession
	GroupServe      = cmdutil.GroupServe
	GroupConnection = cmdutil.GroupConnection
	GroupAuth       = cmdutil.GroupAuth
	GroupHelp       = cmdutil.GroupHelp
)

// FlagGroup puts the flags defined on cmd from now on, until end is
// called, in the group g (cmdutil.FlagGroup).
func FlagGroup(cmd *cobra.Command, g string) (end func()) { return cmdutil.FlagGroup(cmd, g) }

// AddJSONFlag adds --json, in the Output group, to a command whose
// output has a JSON form.
func AddJSONFlag(cmd *cobra.Command, json *bool, usage string) { cmdutil.AddJSONFlag(cmd, json, usage) }
