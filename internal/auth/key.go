package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Key is a private key mcpi signs JWTs with: client assertions
// (private_key_jwt, RFC 7523 §2.2) and DPoP proofs (RFC 9449). Signing and
// the JWK thumbprint come from go-jose.
type Key struct {
	priv crypto.Signer
	alg  jose.SignatureAlgorithm
	pub  jose.JSONWebKey
	jkt  string // RFC 7638 SHA-256 thumbprint of the public key, base64url
}

// GenerateKey returns a new P-256 key (ES256): the DPoP key of one run
// when the user gives none.
func GenerateKey() (*Key, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return NewKey(k)
}

// NewKey wraps an ECDSA (P-256, P-384, P-521), RSA (2048 bits or more) or
// Ed25519 private key.
func NewKey(priv crypto.Signer) (*Key, error) {
	var alg jose.SignatureAlgorithm
	switch k := priv.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256():
			alg = jose.ES256
		case elliptic.P384():
			alg = jose.ES384
		case elliptic.P521():
			alg = jose.ES512
		default:
			return nil, errors.New("an ECDSA key on an unsupported curve (want P-256, P-384 or P-521)")
		}
	case *rsa.PrivateKey:
		if k.N.BitLen() < 2048 {
			return nil, fmt.Errorf("an RSA key of %d bits (want 2048 or more)", k.N.BitLen())
		}
		alg = jose.RS256
	case ed25519.PrivateKey:
		alg = jose.EdDSA
	default:
		return nil, fmt.Errorf("a %T key (want ECDSA, RSA or Ed25519)", priv)
	}
	pub := jose.JSONWebKey{Key: priv.Public(), Algorithm: string(alg), Use: "sig"}
	tp, err := (&jose.JSONWebKey{Key: priv.Public()}).Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, err
	}
	return &Key{priv: priv, alg: alg, pub: pub, jkt: base64.RawURLEncoding.EncodeToString(tp)}, nil
}

// ParseKey reads a PEM private key: PKCS #8, SEC 1 (EC PRIVATE KEY) or
// PKCS #1 (RSA PRIVATE KEY).
func ParseKey(data []byte) (*Key, error) {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil, errors.New("no PEM private key (want PKCS #8, EC PRIVATE KEY or RSA PRIVATE KEY)")
		}
		var k any
		var err error
		switch b.Type {
		case "PRIVATE KEY":
			k, err = x509.ParsePKCS8PrivateKey(b.Bytes)
		case "EC PRIVATE KEY":
			k, err = x509.ParseECPrivateKey(b.Bytes)
		case "RSA PRIVATE KEY":
			k, err = x509.ParsePKCS1PrivateKey(b.Bytes)
		default:
			continue // EC PARAMETERS, a certificate...
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Type, err)
		}
		s, ok := k.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("a %T key cannot sign", k)
		}
		return NewKey(s)
	}
}

// LoadKey reads a PEM private key file.
func LoadKey(path string) (*Key, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	k, err := ParseKey(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// Alg is the JWS algorithm the key signs with (ES256, RS256, EdDSA...).
func (k *Key) Alg() string { return string(k.alg) }

// Thumbprint is the key's RFC 7638 SHA-256 JWK thumbprint, base64url: the
// jkt a DPoP-bound token's cnf claim names.
func (k *Key) Thumbprint() string { return k.jkt }

// algFor picks the algorithm to sign with at a server that lists the ones
// it accepts: the key's own, or for RSA, PS256 when only that is listed.
func (k *Key) algFor(supported []string) jose.SignatureAlgorithm {
	if _, ok := k.priv.(*rsa.PrivateKey); ok && len(supported) > 0 && !slices.Contains(supported, string(jose.RS256)) && slices.Contains(supported, string(jose.PS256)) {
		return jose.PS256
	}
	return k.alg
}

// sign makes a compact JWS of claims with header typ (none when empty),
// the public key embedded as jwk when embed is set.
func (k *Key) sign(alg jose.SignatureAlgorithm, typ string, embed bool, claims map[string]any) (string, error) {
	opts := &jose.SignerOptions{EmbedJWK: embed}
	if typ != "" {
		opts = opts.WithType(jose.ContentType(typ))
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: k.priv}, opts)
	if err != nil {
		return "", err
	}
	return jwt.Signed(s).Claims(claims).Serialize()
}

// clientAssertionType is RFC 7523's client_assertion_type.
const clientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// assertionLifetime is how long a client assertion is valid.
const assertionLifetime = 5 * time.Minute

// clientAssertion signs a private_key_jwt client assertion (RFC 7523
// §2.2 and §3): the client is issuer and subject, the authorization
// server's issuer identifier the audience, valid for a few minutes, with
// a fresh jti.
func (k *Key) clientAssertion(clientID, audience string, algs []string, now time.Time) (string, error) {
	return k.sign(k.algFor(algs), "", false, map[string]any{
		"iss": clientID, "sub": clientID, "aud": audience,
		"iat": now.Unix(), "exp": now.Add(assertionLifetime).Unix(), "jti": rand.Text(),
	})
}

// dpopProof signs a DPoP proof (RFC 9449 §4.2) for a request of method to
// htu (without its query and fragment); accessToken, when set, is bound by
// its hash (ath), and nonce is the server's latest DPoP-Nonce.
func (k *Key) dpopProof(method, htu, accessToken, nonce string, now time.Time) (string, error) {
	claims := map[string]any{"jti": rand.Text(), "htm": method, "htu": htu, "iat": now.Unix()}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	if nonce != "" {
		claims["nonce"] = nonce
	}
	return k.sign(k.alg, "dpop+jwt", true, claims)
}
