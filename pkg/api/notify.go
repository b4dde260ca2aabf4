package api

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/bcs-mesos/bcs-mesos/pkg/apiv1"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/registry"
	"github.com/bcs-mesos/bcs-mesos/pkg/strictjson"
)

// Seed 002's Notify Api: GET, POST ?callback=URL and DELETE ?callback=URL
// on /v1/notifies (the seed's /api/notifies), and the delivery log at
// /v1/notifications. Callback URLs are shown redacted: they may carry
// credentials (userinfo, tokens in the query).

// addNotify registers a callback (202, as the seed's), or changes the
// events of the one registered at its URL.
func (s *Server) addNotify(w http.ResponseWriter, r *http.Request) error {
	var req apiv1.NotifyRequest
	if r.URL.Query().Has("callback") {
		if n, _ := io.ReadFull(r.Body, make([]byte, 1)); n > 0 {
			return fmt.Errorf("callback: give it in the query or in a JSON body, not both: %w", errdefs.ErrInvalidArgument)
		}
		req.Callback = r.URL.Query().Get("callback")
	} else {
		body, err := s.readBody(r)
		if err != nil {
			return err
		}
		if err := strictjson.Decode(body, &req); err != nil {
			return err
		}
	}
	u, err := registry.ParseCallbackURL("callback", req.Callback)
	if err != nil {
		return err
	}
	var events []registry.NoticeType
	for i, name := range req.Events {
		t := registry.NoticeType(name)
		if !slices.Contains(registry.NoticeTypes, t) {
			return fmt.Errorf("events[%d]: %q is not one of %s: %w", i, t, noticeTypeList(), errdefs.ErrInvalidArgument)
		}
		if !slices.Contains(events, t) {
			events = append(events, t)
		}
	}
	cb, _, err := s.cfg.Registry.PutNotifyCallback(r.Context(), u, events)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, cb)
	return nil
}

func noticeTypeList() string {
	names := make([]string, len(registry.NoticeTypes))
	for i, t := range registry.NoticeTypes {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

func (s *Server) listNotifies(w http.ResponseWriter, r *http.Request) error {
	callbacks, err := s.cfg.Registry.ListNotifyCallbacks(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"notifies": nonNil(callbacks)})
	return nil
}

// deleteNotify unregisters a callback; its pending deliveries are
// cancelled.
func (s *Server) deleteNotify(w http.ResponseWriter, r *http.Request) error {
	u, err := registry.ParseCallbackURL("callback", r.URL.Query().Get("callback"))
	if err != nil {
		return err
	}
	if err := s.cfg.Registry.DeleteNotifyCallback(r.Context(), u); err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"id": u.ID(), "url": u.Redacted()})
	return nil
}

// listNotifications is the delivery log, newest first, filtered by
// namespace, app, type and state; limit bounds a page and next, when
// set, is the before= of the next one.
func (s *Server) listNotifications(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	limit, err := pageLimit(r, defaultLogPage)
	if err != nil {
		return err
	}
	noticeType := registry.NoticeType(q.Get("type"))
	if noticeType != "" && !slices.Contains(registry.NoticeTypes, noticeType) {
		return fmt.Errorf("type: %q is not one of %s: %w", noticeType, noticeTypeList(), errdefs.ErrInvalidArgument)
	}
	states := []registry.NotificationState{registry.NotificationPending, registry.NotificationDelivered, registry.NotificationFailed}
	state := registry.NotificationState(q.Get("state"))
	if state != "" && !slices.Contains(states, state) {
		return fmt.Errorf("state: %q is not one of pending, delivered, failed: %w", state, errdefs.ErrInvalidArgument)
	}
	all, err := s.cfg.Registry.ListNotifications(r.Context())
	if err != nil {
		return err
	}
	page, next := []apiv1.NotificationView{}, ""
	before := q.Get("before")
	for _, n := range slices.Backward(all) {
		switch {
		case before != "" && n.ID >= before,
			q.Get("namespace") != "" && n.Namespace != q.Get("namespace"),
			q.Get("app") != "" && n.App != q.Get("app"),
			noticeType != "" && n.Type != noticeType,
			state != "" && n.State() != state:
			continue
		}
		if len(page) == limit {
			next = page[len(page)-1].ID
			break
		}
		page = append(page, viewNotification(n))
	}
	writeList(w, "notifications", page, next)
	return nil
}

func (s *Server) getNotification(w http.ResponseWriter, r *http.Request) error {
	n, err := s.cfg.Registry.GetNotification(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, viewNotification(n))
	return nil
}
