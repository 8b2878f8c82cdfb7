package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// webConfig writes an exporter-toolkit web configuration file holding
// body into a folder of its own and returns its path.
func webConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// fetch GETs url with c, with user and password when user is not "",
// and returns the status and body.
func fetch(t *testing.T, c *http.Client, url, user, password string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestWebConfigBasicAuth: with --web.config.file naming a user and the
// bcrypt hash of a password, the metrics and the landing page answer 401
// without credentials or with a wrong password, and 200 with the user's.
func TestWebConfigBasicAuth(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	cfg := webConfig(t, "basic_auth_users:\n  prometheus: "+string(hash)+"\n")
	addr := start(t, "--root", hosttest.Root("seed"), "--web.config.file", cfg)
	for _, path := range []string{"/metrics", "/"} {
		url := "http://" + addr + path
		for _, tt := range []struct {
			user, password string
			want           int
		}{{"", "", 401}, {"prometheus", "wrong", 401}, {"nobody", "s3cret", 401}, {"prometheus", "s3cret", 200}} {
			code, body := fetch(t, http.DefaultClient, url, tt.user, tt.password)
			if code != tt.want {
				t.Errorf("GET %s as %q/%q: %d, want %d", path, tt.user, tt.password, code, tt.want)
			}
			if path == "/metrics" && (code == 200) != strings.Contains(body, "\nirqnuma_scrape_error 0\n") {
				t.Errorf("GET %s as %q/%q: %d with body %.200q", path, tt.user, tt.password, code, body)
			}
		}
	}
}

// testCert writes a self-signed ECDSA certificate for 127.0.0.1 and its
// key into dir, as cert.pem and key.pem, and returns a pool trusting it.
func testCert(t *testing.T, dir string) *x509.CertPool {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "irqnuma-exporter test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for name, block := range map[string]*pem.Block{"cert.pem": {Type: "CERTIFICATE", Bytes: der}, "key.pem": {Type: "PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return pool
}

// TestWebConfigTLS: with --web.config.file naming a certificate and its
// key (relative to the file's folder, as exporter-toolkit reads them), a
// client that trusts the certificate gets the metrics over HTTPS, one
// that does not is refused by its own TLS, and plain HTTP gets 400.
func TestWebConfigTLS(t *testing.T) {
	cfg := webConfig(t, "tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n")
	pool := testCert(t, filepath.Dir(cfg))
	addr := start(t, "--root", hosttest.Root("seed"), "--web.config.file", cfg)
	trusting := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	if code, body := fetch(t, trusting, "https://"+addr+"/metrics", "", ""); code != 200 || !strings.Contains(body, "\nirqnuma_scrape_error 0\n") {
		t.Errorf("GET https://%s/metrics trusting the certificate: %d, %.200q; want 200 with the host's series", addr, code, body)
	}
	if code, body := fetch(t, trusting, "https://"+addr+"/", "", ""); code != 200 || !strings.Contains(body, `href="/metrics"`) {
		t.Errorf("GET https://%s/: %d, %.200q; want the landing page", addr, code, body)
	}
	if _, err := http.Get("https://" + addr + "/metrics"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("GET https://%s/metrics not trusting the certificate: %v, want a certificate error", addr, err)
	}
	if code, _ := fetch(t, http.DefaultClient, "http://"+addr+"/metrics", "", ""); code != http.StatusBadRequest {
		t.Errorf("GET http://%s/metrics on the TLS port: %d, want 400", addr, code)
	}
}

// TestWebConfigInvalid: a web configuration that exporter-toolkit
// refuses (an unknown key, a certificate without its key) stops the
// exporter before it listens, exit 1 naming the file.
func TestWebConfigInvalid(t *testing.T) {
	for _, body := range []string{"basic_auth_users:\n  prometheus: [x]\n", "tls_server_config:\n  cert_file: cert.pem\n", "no_such_key: 1\n"} {
		cfg := webConfig(t, body)
		var stdout, stderr strings.Builder
		code := run(t.Context(), []string{"--root", hosttest.Root("seed"), "--web.config.file", cfg, "--web.listen-address", "127.0.0.1:0"}, &stdout, &stderr)
		if code != 1 || !strings.Contains(stderr.String(), "--web.config.file "+cfg+": ") || strings.Contains(stderr.String(), "msg=serving") {
			t.Errorf("web config %q: exit %d, stderr %q; want exit 1 naming the file, before serving", body, code, stderr.String())
		}
	}
}

// TestDocsWebConfig: the web configuration block of docs/many-hosts.md
// is one exporter-toolkit takes, and the answers the pasted run after it
// shows (401 without the password, 200 with it, the seed tree's
// irqnuma_scrape_error 0) are what the exporter answers on that file.
func TestDocsWebConfig(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "many-hosts.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "`TestDocsWebConfig` serves with this block")
	_, rest, ok2 := strings.Cut(rest, "```yaml\n")
	block, rest, ok3 := strings.Cut(rest, "```")
	_, rest, ok4 := strings.Cut(rest, "```\n")
	run, _, ok5 := strings.Cut(rest, "```")
	if !ok || !ok2 || !ok3 || !ok4 || !ok5 {
		t.Fatal("docs/many-hosts.md has no web configuration block and run after TestDocsWebConfig's mention")
	}
	addr := start(t, "--root", hosttest.Root("seed"), "--web.config.file", webConfig(t, block))
	noAuth, _ := fetch(t, http.DefaultClient, "http://"+addr+"/metrics", "", "")
	auth, body := fetch(t, http.DefaultClient, "http://"+addr+"/metrics", "prometheus", "irqnuma-example")
	scrapeError := "irqnuma_scrape_error 1"
	if strings.Contains(body, "\nirqnuma_scrape_error 0\n") {
		scrapeError = "irqnuma_scrape_error 0"
	}
	want := fmt.Sprintf("\n%d\n", noAuth) + "$ curl -s -o /dev/null -w '%{http_code}\\n' -u prometheus:irqnuma-example 127.0.0.1:9143/metrics\n" +
		fmt.Sprintf("%d\n", auth) + "$ curl -s -u prometheus:irqnuma-example 127.0.0.1:9143/metrics | grep '^irqnuma_scrape_error'\n" + scrapeError + "\n"
	if !strings.HasSuffix(run, want) || noAuth != 401 || auth != 200 {
		t.Errorf("the docs' run:\n%s\nwant it to end in what the exporter answers (401 and 200 wanted):%s", run, want)
	}
}
