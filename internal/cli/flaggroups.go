package cli

import (
	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/cmdutil"
)

// The groups of flags a command's help shows (cmdutil.FlagGroups), by the
// names the verbs use.
const (
	groupArgs       = cmdutil.GroupArgs
	groupLoad       = cmdutil.GroupLoad
	groupOutput     = cmdutil.GroupOutput
	groupSession    = cmdutil.GroupSession
	groupServe      = cmdutil.GroupServe
	groupConnection = cmdutil.GroupConnection
	groupAuth       = cmdutil.GroupAuth
	groupHelp       = cmdutil.GroupHelp
)

// flagGroup puts the flags defined on cmd from now on, until end is
// called, in the group g (cmdutil.FlagGroup).
func flagGroup(cmd *cobra.Command, g string) (end func()) { return cmdutil.FlagGroup(cmd, g) }

// addJSONFlag adds --json, in the Output group, to a command whose
// output has a JSON form.
func addJSONFlag(cmd *cobra.Command, json *bool, usage string) { cmdutil.AddJSONFlag(cmd, json, usage) }
