package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/auth"
)

//go:embed static templates
var files embed.FS

var pages = template.Must(template.ParseFS(files, "templates/*.html"))

// Authenticator names the caller of a page and checks the token given to
// the login form (auth.Authenticator).
type Authenticator interface {
	Authenticate(r *http.Request) (auth.Identity, error)
	AuthenticateToken(token string) (auth.Identity, error)
}

// Config configures the console.
type Config struct {
	// Authenticator checks logins and sessions; nil: the API runs without
	// authentication, and so does the console.
	Authenticator Authenticator
	// Logger takes a line per login and logout; default slog.Default().
	Logger *slog.Logger
}

// maxLoginBytes bounds the login form: a token and its field name.
const maxLoginBytes = 4096

// Prefix is where the console is served.
const Prefix = "/ui/"

// console serves the pages and assets under Prefix.
type console struct {
	cfg    Config
	mux    *http.ServeMux
	static fs.FS
	// etags are the assets' content hashes: a browser revalidates them
	// and downloads only what a new binary changed.
	etags map[string]string
}

// New returns the console's handler of every path under Prefix.
func New(cfg Config) http.Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	static, err := fs.Sub(files, "static")
	if err != nil {
		panic(err)
	}
	c := &console{cfg: cfg, mux: http.NewServeMux(), static: static, etags: map[string]string{}}
	err = fs.WalkDir(static, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(static, name)
		sum := sha256.Sum256(data)
		c.etags[name] = `"` + hex.EncodeToString(sum[:8]) + `"`
		return err
	})
	if err != nil {
		panic(err)
	}
	c.mux.HandleFunc("GET "+Prefix+"assets/{file...}", c.asset)
	c.mux.HandleFunc("GET "+Prefix+"login", c.loginPage)
	c.mux.HandleFunc("POST "+Prefix+"login", c.login)
	c.mux.HandleFunc("POST "+Prefix+"logout", c.logout)
	c.mux.HandleFunc("GET "+Prefix+"{page...}", c.shell)
	return c
}

// ServeHTTP answers with the console's security headers: its own
// scripts and styles only, never in a frame, no referrer to other sites.
func (c *console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	c.mux.ServeHTTP(w, r)
}

func (c *console) asset(w http.ResponseWriter, r *http.Request) {
	name := path.Clean(r.PathValue("file"))
	etag, ok := c.etags[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	data, _ := fs.ReadFile(c.static, name)
	w.Header().Set("ETag", etag)
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(data))
}

// shellData is what the shell shows of its caller: never the token.
type shellData struct {
	User, Role string
	// Auth: the console has a login (and so a logout).
	Auth bool
}

// shell is every page of the console: the scripts render the page its
// path names. A caller without a session is sent to the login.
func (c *console) shell(w http.ResponseWriter, r *http.Request) {
	data := shellData{}
	if c.cfg.Authenticator != nil {
		id, err := c.cfg.Authenticator.Authenticate(r)
		if err != nil {
			http.Redirect(w, r, Prefix+"login", http.StatusSeeOther)
			return
		}
		data = shellData{User: id.User, Role: string(id.Role), Auth: true}
	}
	c.render(w, http.StatusOK, "shell.html", data)
}

type loginData struct {
	Error string
}

func (c *console) loginPage(w http.ResponseWriter, r *http.Request) {
	if c.cfg.Authenticator == nil {
		http.Redirect(w, r, Prefix, http.StatusSeeOther)
		return
	}
	c.render(w, http.StatusOK, "login.html", loginData{})
}

// login checks the token of the login form and keeps it in the session
// cookie. A form posted from another site is refused: it would log the
// browser in as someone else (login CSRF).
func (c *console) login(w http.ResponseWriter, r *http.Request) {
	if c.cfg.Authenticator == nil {
		http.Redirect(w, r, Prefix, http.StatusSeeOther)
		return
	}
	if !sameOrigin(r) {
		c.render(w, http.StatusForbidden, "login.html", loginData{Error: "refused: the login form was sent from another site (" + r.Header.Get("Origin") + ")"})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxLoginBytes)
	token := strings.TrimSpace(r.PostFormValue("token"))
	id, err := c.cfg.Authenticator.AuthenticateToken(token)
	if token == "" || err != nil {
		c.cfg.Logger.Warn("console login refused", "remote", r.RemoteAddr)
		c.render(w, http.StatusUnauthorized, "login.html", loginData{Error: "unknown token"})
		return
	}
	http.SetCookie(w, sessionCookie(r, token))
	c.cfg.Logger.Info("console login", "user", id.User, "role", id.Role, "remote", r.RemoteAddr)
	http.Redirect(w, r, Prefix, http.StatusSeeOther)
}

// logout ends the session: the cookie is cleared.
func (c *console) logout(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		http.Error(w, "refused: the logout form was sent from another site", http.StatusForbidden)
		return
	}
	cookie := sessionCookie(r, "")
	cookie.MaxAge = -1
	http.SetCookie(w, cookie)
	http.Redirect(w, r, Prefix+"login", http.StatusSeeOther)
}

// sessionCookie keeps token for the API's every path: out of the
// scripts' reach, never sent by another site's request, only over TLS
// when the console is served over TLS.
func sessionCookie(r *http.Request, token string) *http.Cookie {
	return &http.Cookie{Name: auth.SessionCookie, Value: token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil}
}

// sameOrigin reports whether a form was posted by a page of this
// server. A browser says where the request comes from: Sec-Fetch-Site,
// else the Origin of the page; a client that says neither (curl) is no
// browser another site could drive.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin" || site == "none"
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host == r.Host
}

func (c *console) render(w http.ResponseWriter, status int, page string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if err := pages.ExecuteTemplate(w, page, data); err != nil {
		c.cfg.Logger.Error("console page", "page", page, "err", err)
	}
}
