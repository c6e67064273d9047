package authtest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// A snapshot is the caller's own: the server appending later does not
// change it, and the caller writing to it does not change the server's.
func TestSnapshotIsACopy(t *testing.T) {
	var mu sync.Mutex
	list := []string{"a", "b"}
	got := snapshot(&mu, &list)
	got[0] = "changed"
	list = append(list, "c")
	if len(got) != 2 || list[0] != "a" {
		t.Errorf("snapshot %q, list %q", got, list)
	}
}

func TestParseFormRefusesABadBody(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/token", strings.NewReader("%zz"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	if parseForm(w, r) {
		t.Fatal("parseForm accepted a body that is no form")
	}
	if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "invalid_request") {
		t.Errorf("answered %d %s", w.Code, w.Body)
	}
}
