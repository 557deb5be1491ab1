package dev.nepenthe.server.grpc;

import io.grpc.Status;

/**
 * What a token may do, each role including the ones before it. A token always belongs to one
 * tenant; only the store operator reaches past it.
 *
 * <ul>
 *   <li>{@code tenant}: records, searches, forgets, holds and re-admissions in its own tenant.
 *   <li>{@code tenant-admin}: also administration confined to its own tenant (today the statistics
 *       of that tenant), never another tenant's data and never the whole store.
 *   <li>{@code store-operator}: also the whole store: creating and dropping collections (which
 *       every tenant shares), snapshots, restores, the ledger's verification, and the statistics of
 *       every tenant and of the query cache. {@code operator}, its old name, is still read from
 *       tokens files.
 * </ul>
 */
enum Role {
    TENANT("tenant"),
    TENANT_ADMIN("tenant-admin"),
    STORE_OPERATOR("store-operator");

    /**
     * The names a tokens file may use; {@code operator} is the old name of {@code store-operator}.
     */
    static final String NAMES =
            "'tenant', 'tenant-admin' or 'store-operator' (or 'operator', its old name)";

    private final String label;

    Role(String label) {
        this.label = label;
    }

    /** The name tokens files use. */
    String label() {
        return label;
    }

    /** The role a name stands for, or null if it stands for none. */
    static Role named(String name) {
        return switch (name) {
            case "tenant" -> TENANT;
            case "tenant-admin" -> TENANT_ADMIN;
            case "store-operator", "operator" -> STORE_OPERATOR;
            default -> null;
        };
    }

    /**
     * The current caller, if its role is at least {@code needed}; PERMISSION_DENIED saying what it
     * needed otherwise.
     */
    static Caller require(Role needed, String what) {
        Caller c = Caller.current();
        if (c.role().compareTo(needed) < 0) {
            throw Status.PERMISSION_DENIED
                    .withDescription(
                            "to "
                                    + what
                                    + ": expected a token with the "
                                    + needed.label
                                    + " role, got one with the "
                                    + c.role().label
                                    + " role")
                    .asRuntimeException();
        }
        return c;
    }
}
