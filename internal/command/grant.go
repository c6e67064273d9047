package command

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/auth"
	"github.com/mcpi-dev/mcpi/internal/config"
)

// The environment variables that may hold OAuth secrets instead of a file
// (never argv: a command line is seen by every process of the machine).
const (
	EnvClientSecret    = "MCPI_CLIENT_SECRET"
	EnvAssertion       = "MCPI_OAUTH_ASSERTION"
	EnvIDToken         = "MCPI_OAUTH_ID_TOKEN"
	EnvIDPClientSecret = "MCPI_IDP_CLIENT_SECRET"
)

func addGrantFlags(cmd *cobra.Command, a *AuthOptions) {
	f := cmd.Flags()
	f.StringVar(&a.Issuer, "oauth-issuer", "", "OAuth: the authorization server (issuer) the client secret or the workload's JWT may go to; any other the server names is refused")
	f.StringVar(&a.Grant, "grant", "", "OAuth: the grant: "+strings.Join(auth.Grants, ", ")+" (default authorization_code)")
	f.StringVar(&a.ClientSecretFile, "client-secret-file", "", "OAuth: read the secret of --client-id from this file (or $"+EnvClientSecret+")")
	f.StringVar(&a.ClientAssertionKey, "client-assertion-key", "", "OAuth: authenticate --client-id with a JWT signed by this PEM private key (private_key_jwt) instead of a secret")
	f.StringVar(&a.AssertionFile, "assertion-file", "", "OAuth, --grant jwt-bearer: the file of the workload's JWT, read at each authorization (or $"+EnvAssertion+")")
	f.StringVar(&a.IDTokenFile, "id-token-file", "", "OAuth, --grant id-jag: the file of the user's ID token from the identity provider (or $"+EnvIDToken+")")
	f.StringVar(&a.IDPIssuer, "idp-issuer", "", "OAuth, --grant id-jag: the identity provider's issuer (its token endpoint is read from its metadata)")
	f.StringVar(&a.IDPTokenEndpoint, "idp-token-endpoint", "", "OAuth, --grant id-jag: the identity provider's token endpoint, where the ID token is exchanged")
	f.StringVar(&a.IDPClientID, "idp-client-id", "", "OAuth, --grant id-jag: mcpi's client ID at the identity provider")
	f.StringVar(&a.IDPClientSecretFile, "idp-client-secret-file", "", "OAuth, --grant id-jag: the file of the secret of --idp-client-id (or $"+EnvIDPClientSecret+")")
	f.BoolVar(&a.DPoP, "dpop", false, "OAuth: request DPoP-bound tokens (RFC 9449), with a key made for this run")
	f.StringVar(&a.DPoPKey, "dpop-key", "", "OAuth: request DPoP-bound tokens, signing the proofs with this PEM private key (implies --dpop; tokens kept in the store stay usable)")
}

// grantFlagsSet reports whether a flag of the grants is given.
func (a *AuthOptions) grantFlagsSet() bool {
	return a.Grant != "" || a.Issuer != "" || a.ClientSecretFile != "" || a.ClientAssertionKey != "" || a.AssertionFile != "" || a.IDTokenFile != "" ||
		a.IDPIssuer != "" || a.IDPTokenEndpoint != "" || a.IDPClientID != "" || a.IDPClientSecretFile != "" || a.DPoP || a.DPoPKey != ""
}

// validateGrant checks the grant's flags and reads its secrets and keys.
func (a *AuthOptions) validateGrant() error {
	if a.Grant != "" && !slices.Contains(auth.Grants, a.Grant) {
		return FlagErrorf("invalid --grant %q: want one of %s", a.Grant, strings.Join(auth.Grants, ", "))
	}
	g := a.Grant
	if g == "" {
		g = auth.GrantAuthorizationCode
	}
	var err error
	if a.ClientSecretFile != "" {
		if a.ClientSecret, err = readSecretFile("--client-secret-file", a.ClientSecretFile); err != nil {
			return err
		}
	} else if v := os.Getenv(EnvClientSecret); a.ClientSecret == "" && a.ClientID != "" && v != "" {
		a.ClientSecret = strings.TrimSpace(v)
	}
	if a.ClientAssertionKey != "" {
		if a.ClientSecret != "" {
			return FlagErrorf("--client-assertion-key authenticates the client instead of its secret: give one of them")
		}
		if a.clientKey, err = auth.LoadKey(a.ClientAssertionKey); err != nil {
			return FlagErrorf("--client-assertion-key: %v", err)
		}
	}
	if a.DPoPKey != "" {
		if a.dpopKey, err = auth.LoadKey(a.DPoPKey); err != nil {
			return FlagErrorf("--dpop-key: %v", err)
		}
	} else if a.DPoP && a.dpopKey == nil {
		// One key for the run: every connection of it presents the same.
		if a.dpopKey, err = auth.GenerateKey(); err != nil {
			return fmt.Errorf("making a DPoP key: %w", err)
		}
	}
	if a.IDPClientSecretFile != "" {
		if a.idpSecret, err = readSecretFile("--idp-client-secret-file", a.IDPClientSecretFile); err != nil {
			return err
		}
	} else if a.IDPClientID != "" {
		a.idpSecret = strings.TrimSpace(os.Getenv(EnvIDPClientSecret))
	}
	hasClientAuth := a.ClientSecret != "" || a.clientKey != nil
	idp := a.IDPIssuer != "" || a.IDPTokenEndpoint != "" || a.IDPClientID != "" || a.IDPClientSecretFile != "" || a.IDTokenFile != ""
	switch {
	case g != auth.GrantJWTBearer && a.AssertionFile != "":
		return FlagErrorf("--assertion-file goes with --grant jwt-bearer")
	case g != auth.GrantIDJAG && idp:
		return FlagErrorf("--id-token-file and the --idp flags go with --grant id-jag")
	case g != auth.GrantAuthorizationCode && a.ClientMetadataURL != "":
		return FlagErrorf("--client-metadata-url is for --grant authorization_code")
	case g == auth.GrantClientCredentials && (a.ClientID == "" || !hasClientAuth):
		return FlagErrorf("--grant client_credentials needs --client-id and its secret (--client-secret-file, $%s) or key (--client-assertion-key)", EnvClientSecret)
	case g == auth.GrantIDJAG && a.ClientID == "":
		return FlagErrorf("--grant id-jag needs --client-id (and its secret or key): mcpi's client at the MCP server's authorization server")
	case g == auth.GrantIDJAG && a.IDPIssuer == "" && a.IDPTokenEndpoint == "":
		return FlagErrorf("--grant id-jag needs the identity provider: --idp-issuer or --idp-token-endpoint")
	}
	switch g {
	case auth.GrantJWTBearer:
		a.assertion = fileOrEnv("--assertion-file", a.AssertionFile, EnvAssertion)
		if a.AssertionFile == "" && os.Getenv(EnvAssertion) == "" {
			return FlagErrorf("--grant jwt-bearer needs the workload's JWT: --assertion-file FILE or $%s", EnvAssertion)
		}
	case auth.GrantIDJAG:
		a.idToken = fileOrEnv("--id-token-file", a.IDTokenFile, EnvIDToken)
		if a.IDTokenFile == "" && os.Getenv(EnvIDToken) == "" {
			return FlagErrorf("--grant id-jag needs the user's ID token: --id-token-file FILE or $%s", EnvIDToken)
		}
	}
	return nil
}

// currentAssertions are the assertions as they are now, for redaction
// (the flow learns the ones it reads later itself).
func (a *AuthOptions) currentAssertions() []string {
	var out []string
	for _, read := range []func() (string, error){a.assertion, a.idToken} {
		if read == nil {
			continue
		}
		if v, err := read(); err == nil {
			out = append(out, v)
		}
	}
	return out
}

// readSecretFile reads a secret from a file, without the line end.
func readSecretFile(flag, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", FlagErrorf("%s: %v", flag, err)
	}
	v := strings.TrimSpace(string(b))
	if v == "" {
		return "", FlagErrorf("%s: %s is empty", flag, path)
	}
	return v, nil
}

// fileOrEnv reads a credential from path, else from the environment
// variable env, each time it is called.
func fileOrEnv(flag, path, env string) func() (string, error) {
	return func() (string, error) {
		if path != "" {
			b, err := os.ReadFile(path)
			if err != nil {
				return "", fmt.Errorf("%s: %w", flag, err)
			}
			return strings.TrimSpace(string(b)), nil
		}
		return strings.TrimSpace(os.Getenv(env)), nil
	}
}

// fromConfig takes a config entry's "oauth" object: what the command line
// does not say, the entry does. The grant's flags are checked again, and
// what they read kept out of traces.
func (a *AuthOptions) fromConfig(c *config.OAuth, t *TargetOptions) error {
	if a.Bearer != "" {
		return nil // a token of the user's own: no OAuth
	}
	set := func(dst *string, v string) {
		if *dst == "" {
			*dst = v
		}
	}
	set(&a.ClientID, c.ClientID)
	set(&a.Grant, c.Grant)
	if a.ClientSecret == "" {
		set(&a.ClientSecretFile, c.ClientSecretFile)
	}
	set(&a.ClientAssertionKey, c.ClientAssertionKey)
	set(&a.ClientMetadataURL, c.ClientMetadataURL)
	set(&a.Issuer, c.Issuer)
	set(&a.AssertionFile, c.AssertionFile)
	set(&a.IDTokenFile, c.IDTokenFile)
	set(&a.IDPIssuer, c.IDP.Issuer)
	set(&a.IDPTokenEndpoint, c.IDP.TokenEndpoint)
	set(&a.IDPClientID, c.IDP.ClientID)
	set(&a.IDPClientSecretFile, c.IDP.ClientSecretFile)
	set(&a.DPoPKey, c.DPoPKey)
	a.DPoP = a.DPoP || c.DPoP
	if len(a.Scopes) == 0 {
		a.Scopes = c.Scopes
	}
	if a.RedirectPort == 0 {
		a.RedirectPort = c.RedirectPort
	}
	if err := a.validateGrant(); err != nil {
		return err
	}
	t.secrets = append(t.secrets, a.ClientSecret, a.idpSecret)
	t.secrets = append(t.secrets, a.currentAssertions()...)
	return nil
}
