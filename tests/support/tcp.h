/* tcp.h — a blocking TCP connection for test clients that speak raw Kafka. */
#ifndef KAAS_TEST_TCP_H
#define KAAS_TEST_TCP_H

/* Connect to "IPv4:PORT" (e.g. "127.0.0.1:9092").  Returns the socket, or -1
 * (malformed address, or the connection failed). */
int kaas_test_connect(const char *hostport);

#endif
