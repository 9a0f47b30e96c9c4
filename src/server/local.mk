# src/server (layer 7): the network server (connections, dispatch, the request seam's
# implementation) and kaasd.
noinst_LIBRARIES += libkaas_server.a
libkaas_server_a_SOURCES = src/server/server.h src/server/internal.h src/server/server.c \
	src/server/conn.c src/server/mute.c src/server/zerocopy.c src/server/dispatch.c src/server/wakeups.c \
	src/server/listener.c src/server/limits.c src/server/tls.h src/server/tls.c
# the /metrics, /healthz, /readyz endpoint (issue 18)
libkaas_server_a_SOURCES += src/server/http.h src/server/http.c src/server/http_metrics.c
# its status page (issue 39)
libkaas_server_a_SOURCES += src/server/http_status.h src/server/http_status_snap.h \
	src/server/http_status.c src/server/http_status_render.c
bin_PROGRAMS += kaasd
kaasd_SOURCES = src/server/main.c
libkaas_server_a_CPPFLAGS = $(AM_CPPFLAGS) $(SSL_CFLAGS)
kaasd_LDADD = $(KAAS_LIBS_SERVER) $(KAAS_EXT_LIBS) $(SSL_LIBS)
