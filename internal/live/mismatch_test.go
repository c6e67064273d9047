package live

import (
	"errors"
	"testing"
)

// TestMismatchSides: the command's side (a session's record) and the
// daemon's (a request) name the two protocols the same way: Daemon is the
// daemon's, Client the command's.
func TestMismatchSides(t *testing.T) {
	var me *MismatchError
	err := CheckRecord("old", &Status{Proto: ProtocolVersion() + 1})
	if !errors.As(err, &me) || me.Daemon != ProtocolVersion()+1 || me.Client != ProtocolVersion() {
		t.Errorf("a record of another protocol: %#v", err)
	}
	s := &Server{}
	err = s.checkProto(&Request{Proto: 0})
	if !errors.As(err, &me) || me.Daemon != ProtocolVersion() || me.Client != 1 {
		t.Errorf("a request of before the version: %#v", err)
	}
}
