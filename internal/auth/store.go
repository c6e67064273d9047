package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// ConfigDirEnv overrides the directory of mcpi's configuration (tests set it).
const ConfigDirEnv = "MCPI_CONFIG_DIR"

// StoreFile is the name of the token store in mcpi's configuration directory.
const StoreFile = "auth.json"

// DefaultDir returns mcpi's configuration directory: $MCPI_CONFIG_DIR, or
// mcpi under the user's configuration directory.
func DefaultDir() (string, error) {
	if d := os.Getenv(ConfigDirEnv); d != "" {
		return d, nil
	}
	d, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "mcpi"), nil
}

// Registration methods of a Client.
const (
	MethodPreRegistered    = "pre-registered"
	MethodMetadataDocument = "client-id-metadata-document"
	MethodDynamic          = "dynamic-registration"
)

// Client is mcpi's identity at one authorization server.
type Client struct {
	ID     string `json:"clientId"`
	Secret string `json:"clientSecret,omitempty"`
	// Method says how the identity was obtained (MethodDynamic, ...).
	Method string `json:"method"`
	// AuthMethod is the token endpoint authentication method: none,
	// client_secret_basic, client_secret_post or private_key_jwt.
	AuthMethod      string    `json:"tokenEndpointAuthMethod"`
	RedirectURIs    []string  `json:"redirectUris,omitempty"`
	IssuedAt        time.Time `json:"issuedAt,omitzero"`
	SecretExpiresAt time.Time `json:"secretExpiresAt,omitzero"`
}

// Token is an access token and what came with it.
type Token struct {
	AccessToken  string    `json:"accessToken"`
	TokenType    string    `json:"tokenType,omitempty"`
	RefreshToken string    `json:"refreshToken,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	// Scope is the scope granted, as the token endpoint said, or as
	// requested when it did not say.
	Scope string `json:"scope,omitempty"`
	// DPoPJKT is the thumbprint of the key a DPoP-bound token is bound to:
	// only a proof signed with that key makes it usable.
	DPoPJKT string `json:"dpopJkt,omitempty"`
}

// Expired reports whether the token is expired, or will be within skew.
func (t *Token) Expired(now time.Time, skew time.Duration) bool {
	return !t.Expiry.IsZero() && !now.Add(skew).Before(t.Expiry)
}

// Entry is what mcpi keeps for one authorization server (Issuer) and one
// protected resource (Resource): its client identity there and its token.
type Entry struct {
	Issuer   string `json:"issuer"`
	Resource string `json:"resource"`
	// ServerURL is the MCP endpoint the entry was obtained for: how it is
	// found again before any discovery.
	ServerURL string `json:"serverUrl"`
	// TokenEndpoint lets an expired token be refreshed before any discovery.
	TokenEndpoint string  `json:"tokenEndpoint,omitempty"`
	Client        *Client `json:"client,omitempty"`
	Token         *Token  `json:"token,omitempty"`
	// Scopes are the scopes last requested: step-up asks for them again
	// with the new ones.
	Scopes  []string  `json:"scopes,omitempty"`
	Updated time.Time `json:"updated"`
}

type storeFile struct {
	Version int     `json:"version"`
	Entries []Entry `json:"entries"`
}

// Store keeps entries in a JSON file of mode 0600. Each write replaces the
// file at once (write and rename), re-reading it first so that entries
// other processes wrote meanwhile are kept. It is safe for concurrent use
// within a process.
type Store struct {
	path string
	mu   sync.Mutex
}

// OpenStore returns the store in directory dir. Nothing is read or created
// until it is used.
func OpenStore(dir string) *Store { return &Store{path: filepath.Join(dir, StoreFile)} }

// Path returns the file's path.
func (s *Store) Path() string { return s.path }

func (s *Store) load() (storeFile, error) {
	var f storeFile
	b, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("reading the token store: %w", err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, fmt.Errorf("the token store %s is not valid JSON: %v", s.path, err)
	}
	return f, nil
}

func (s *Store) save(f storeFile) error {
	f.Version = 1
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(s.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, ".auth-*.json")
	if err != nil {
		return fmt.Errorf("writing the token store: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("writing the token store: %w", err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("writing the token store: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing the token store: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return fmt.Errorf("writing the token store: %w", err)
	}
	return nil
}

// List returns every entry.
func (s *Store) List() ([]Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.load()
	return f.Entries, err
}

// Get returns the entry for issuer and resource, or nil.
func (s *Store) Get(issuer, resource string) (*Entry, error) {
	entries, err := s.List()
	for i := range entries {
		if entries[i].Issuer == issuer && entries[i].Resource == resource {
			return &entries[i], err
		}
	}
	return nil, err
}

// ForServer returns the most recently updated entry obtained for the MCP
// endpoint serverURL, or nil.
func (s *Store) ForServer(serverURL string) (*Entry, error) {
	entries, err := s.List()
	var best *Entry
	for i := range entries {
		e := &entries[i]
		if e.ServerURL == serverURL && (best == nil || e.Updated.After(best.Updated)) {
			best = e
		}
	}
	return best, err
}

// Put adds e, or replaces the entry of the same issuer and resource.
func (s *Store) Put(e Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.load()
	if err != nil {
		return err
	}
	f.Entries = slices.DeleteFunc(f.Entries, func(x Entry) bool { return x.Issuer == e.Issuer && x.Resource == e.Resource })
	f.Entries = append(f.Entries, e)
	return s.save(f)
}

// Remove deletes the entries match selects and returns them.
func (s *Store) Remove(match func(Entry) bool) ([]Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.load()
	if err != nil {
		return nil, err
	}
	var removed []Entry
	f.Entries = slices.DeleteFunc(f.Entries, func(x Entry) bool {
		if match(x) {
			removed = append(removed, x)
			return true
		}
		return false
	})
	if len(removed) == 0 {
		return nil, nil
	}
	return removed, s.save(f)
}
