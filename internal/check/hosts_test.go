package check

import (
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/check/hosts"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

// TestHostProfilesEndToEnd: for each host, a server whose tools break its
// profile gets the host's verdict in the matrix and its findings; named
// with --host, a rejection is an error (a strict mode's rewrite never is);
// the hosts not named give no error; the correct server gets no host
// finding and every host's acceptance.
func TestHostProfilesEndToEnd(t *testing.T) {
	t.Parallel()
	t.Run("clean", func(t *testing.T) {
		t.Parallel()
		rep := checkPeer(t, mcptest.HostsPrefix+"clean", Options{Hosts: HostIDs()})
		for _, f := range rep.Findings {
			if strings.HasPrefix(f.Rule, "hosts/") {
				t.Errorf("a host finding on the correct server: %s %s: %s", f.Rule, f.Subject, f.Message)
			}
		}
		if len(rep.Hosts) != len(HostIDs()) {
			t.Fatalf("%d rows in the matrix, want %d", len(rep.Hosts), len(HostIDs()))
		}
		for _, h := range rep.Hosts {
			if h.Verdict != string(hosts.Accepted) || !h.Named {
				t.Errorf("%s: %s (named %v)", h.Host, h.Verdict, h.Named)
			}
		}
	})
	for _, p := range hosts.Profiles() {
		t.Run(p.ID, func(t *testing.T) {
			t.Parallel()
			rep := checkPeer(t, mcptest.HostsPrefix+p.ID, Options{Hosts: []string{p.ID}})
			want := hosts.Rejected
			if p.OptIn {
				want = hosts.NeedsRewrite
			}
			var row HostVerdict
			for _, h := range rep.Hosts {
				if h.Host == p.ID {
					row = h
				}
			}
			if row.Verdict != string(want) || !row.Named || row.Summary == "" {
				t.Errorf("the matrix says %+v, want %s", row, want)
			}
			errors := 0
			for _, f := range rep.Findings {
				own := strings.HasPrefix(f.Rule, "hosts/"+p.ID+"/")
				if f.Severity == Error {
					if !own {
						t.Errorf("an error not of the named host: %s %s", f.Rule, f.Message)
					}
					errors++
				}
			}
			switch {
			case p.OptIn && errors > 0:
				t.Errorf("%d error(s) for a strict mode's rewrite", errors)
			case !p.OptIn && errors == 0:
				t.Errorf("no error although %s, named, rejects the server", p.ID)
			}
			found := false
			for _, f := range rep.Findings {
				if strings.HasPrefix(f.Rule, "hosts/"+p.ID+"/") && strings.Contains(f.Message, p.Name) {
					found = true
				}
			}
			if !found {
				t.Errorf("no finding of %s says what %s does", p.ID, p.Name)
			}
		})
	}
}
