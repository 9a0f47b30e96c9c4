/* substrate.h — the `fault+<lower-url>?...` substrate (see substrate.c). */
#ifndef KAAS_FAULTFS_SUBSTRATE_H
#define KAAS_FAULTFS_SUBSTRATE_H

#include "substrate/substrate.h"

struct kaas_fault_model;

/* The registry entry for scheme "fault". */
extern const struct kaas_backend kaas_backend_fault;

/* The model behind a fault+ substrate (for tests: crash, ctl), or NULL if
 * sub is not one. */
struct kaas_fault_model *kaas_fault_substrate_model(struct kaas_substrate *sub);
/* The host index of a fault+ substrate, or -1 if sub is not one. */
int kaas_fault_substrate_host(struct kaas_substrate *sub);

#endif
