package dev.nepenthe.cluster;

/**
 * One replica of a group as the others reach it.
 *
 * @param id the replica's id, unique in the group (letters, digits, '-' and '_')
 * @param raftAddress host:port of its Raft server (replication between replicas)
 * @param clientAddress host:port of its gRPC API (clients)
 */
public record Member(String id, String raftAddress, String clientAddress) {

    /**
     * Checks the fields.
     *
     * @throws IllegalArgumentException if the id is not 1 to 64 letters, digits, '-' or '_', or an
     *     address is not host:port
     */
    public Member {
        if (id == null || !id.matches("[A-Za-z0-9_-]{1,64}")) {
            throw new IllegalArgumentException(
                    "member id: expected 1 to 64 letters, digits, '-' or '_', got "
                            + (id == null ? "none" : id.length() + " characters"));
        }
        port(raftAddress, "raft address of " + id);
        port(clientAddress, "client address of " + id);
    }

    /**
     * The port of a host:port address.
     *
     * @param address the address
     * @param what what the address is, for the message
     * @return the port
     * @throws IllegalArgumentException if it is not host:port with a port from 1 to 65535
     */
    public static int port(String address, String what) {
        int colon = address == null ? -1 : address.lastIndexOf(':');
        try {
            int p = Integer.parseInt(address.substring(colon + 1));
            if (colon > 0 && p >= 1 && p <= 65535) {
                return p;
            }
        } catch (RuntimeException e) {
            // falls through to the refusal
        }
        throw new IllegalArgumentException(
                what + ": expected host:port with a port from 1 to 65535, got '" + address + "'");
    }

    /**
     * The host of a host:port address.
     *
     * @param address the address
     * @return the host
     */
    public static String host(String address) {
        return address.substring(0, address.lastIndexOf(':'));
    }
}
