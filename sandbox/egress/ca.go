package egress

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Files of the CA in the data directory. The certificate is public (it
// is baked into prepared sandbox images); the key never leaves the
// gateway.
const (
	CACertFile = "egress-ca.pem"
	CAKeyFile  = "egress-ca-key.pem"
)

// Validity of what the CA signs. Leaves are re-issued well before they
// expire; the CA itself outlives any deployment.
const (
	caValidity   = 10 * 365 * 24 * time.Hour
	leafValidity = 30 * 24 * time.Hour
	leafRenew    = 24 * time.Hour
	maxLeaves    = 1024
)

// CA is a deployment's certificate authority for the hosts whose TLS the
// proxy terminates, with the leaf certificates it issued cached by host.
type CA struct {
	cert    *x509.Certificate
	key     crypto.Signer
	certPEM []byte
	leafKey *ecdsa.PrivateKey // one key for every leaf: they are only ever shown to sandboxes

	mu     sync.Mutex
	leaves map[string]*tls.Certificate
}

// LoadOrCreateCA reads the CA of dir, generating it on first use: an
// ECDSA P-256 key (0600) and a self-signed certificate.
func LoadOrCreateCA(dir string) (*CA, error) {
	certPath, keyPath := filepath.Join(dir, CACertFile), filepath.Join(dir, CAKeyFile)
	certPEM, cerr := os.ReadFile(certPath)
	keyPEM, kerr := os.ReadFile(keyPath)
	switch {
	case cerr == nil && kerr == nil:
		return parseCA(certPEM, keyPEM)
	case errors.Is(cerr, os.ErrNotExist) && errors.Is(kerr, os.ErrNotExist):
	case cerr != nil && !errors.Is(cerr, os.ErrNotExist):
		return nil, fmt.Errorf("egress CA: %w", cerr)
	case kerr != nil && !errors.Is(kerr, os.ErrNotExist):
		return nil, fmt.Errorf("egress CA: %w", kerr)
	default:
		return nil, fmt.Errorf("egress CA: only one of %s and %s exists; remove it to generate a new CA", certPath, keyPath)
	}
	certPEM, keyPEM, err := newCA()
	if err != nil {
		return nil, err
	}
	// The key first: a certificate without its key would be unusable.
	if err := writeFile(keyPath, keyPEM, 0o600); err != nil {
		return nil, err
	}
	if err := writeFile(certPath, certPEM, 0o644); err != nil {
		return nil, err
	}
	return parseCA(certPEM, keyPEM)
}

// writeFile writes through a temporary file and a rename, so a crash never
// leaves half a key.
func writeFile(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err != nil {
		return fmt.Errorf("egress CA: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(data)
	if err := errors.Join(werr, tmp.Chmod(mode), tmp.Sync(), tmp.Close()); err != nil {
		return fmt.Errorf("egress CA: write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("egress CA: %w", err)
	}
	return nil
}

func newCA() (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("egress CA key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          randomSerial(),
		Subject:               pkix.Name{CommonName: "switchboard egress CA", Organization: []string{"switchboard"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(caValidity),
		IsCA:                  true,
		BasicConstraintsValid: true,
		MaxPathLenZero:        true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, fmt.Errorf("egress CA certificate: %w", err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("egress CA key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}), nil
}

func parseCA(certPEM, keyPEM []byte) (*CA, error) {
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, errors.New("egress CA: the certificate or key file is not PEM")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("egress CA certificate: %w", err)
	}
	k, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("egress CA key: %w", err)
	}
	key, ok := k.(crypto.Signer)
	if !ok || !cert.IsCA {
		return nil, errors.New("egress CA: the key cannot sign, or the certificate is not a CA")
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("egress leaf key: %w", err)
	}
	return &CA{cert: cert, key: key, certPEM: pem.EncodeToMemory(cb), leafKey: leafKey, leaves: map[string]*tls.Certificate{}}, nil
}

// CertPEM is the CA certificate, PEM-encoded: what sandboxes trust.
func (c *CA) CertPEM() []byte { return c.certPEM }

// Fingerprint is the SHA-256 of the CA certificate, in hex: prepared
// images are cached per CA.
func (c *CA) Fingerprint() string {
	sum := sha256.Sum256(c.cert.Raw)
	return hex.EncodeToString(sum[:])
}

// Leaf returns a certificate for host (a name or an IP address), issuing
// it on first use and again when it nears its expiry.
func (c *CA) Leaf(host string) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if l := c.leaves[host]; l != nil && now.Add(leafRenew).Before(l.Leaf.NotAfter) {
		return l, nil
	}
	tmpl := &x509.Certificate{
		SerialNumber: randomSerial(),
		Subject:      pkix.Name{CommonName: host},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(leafValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		tmpl.IPAddresses = append(tmpl.IPAddresses, ip.AsSlice())
	} else {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, c.leafKey.Public(), c.key)
	if err != nil {
		return nil, fmt.Errorf("issue a certificate for %s: %w", host, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	if len(c.leaves) >= maxLeaves {
		clear(c.leaves) // re-issuing is cheap; a bound on memory is not optional
	}
	l := &tls.Certificate{Certificate: [][]byte{der, c.cert.Raw}, PrivateKey: c.leafKey, Leaf: leaf}
	c.leaves[host] = l
	return l, nil
}

func randomSerial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic("egress: crypto/rand failed: " + err.Error())
	}
	return n.Add(n, big.NewInt(1))
}
