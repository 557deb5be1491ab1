package dev.nepenthe.cluster.internal;

import java.util.Arrays;

/**
 * One entry of the replicated log: its kind, which is all the Raft log itself keeps (one byte, no
 * subject data), and its body, which travels on Ratis's state-machine data path into each replica's
 * {@link PayloadJournal}.
 */
// equals, hashCode and toString below compare and show the body by content.
@SuppressWarnings("ArrayRecordComponent")
record Command(Kind kind, byte[] body) {

    /** What an entry does when a replica applies it. */
    enum Kind {
        /** A client's write call ({@link dev.nepenthe.server.grpc.RoutedCall}). */
        WRITE(1),
        /** A replica's signed attestation of its part of a forget. */
        ATTEST(2),
        /** A replica's node key and store key, recorded in the ledger. */
        JOIN(3),
        /** An operator excuses a replica from a forget, with a reason. */
        EXCUSE(4),
        /**
         * An operator removes a replica from the group, with a reason: it is excused from every
         * open forget and its keys leave the ledger's current set, before the configuration drops
         * it.
         */
        LEAVE(5);

        final byte code;

        Kind(int code) {
            this.code = (byte) code;
        }

        static Kind of(byte code) {
            for (Kind k : values()) {
                if (k.code == code) {
                    return k;
                }
            }
            throw new IllegalArgumentException(
                    "log entry: expected a command kind 1 to 5, got " + code);
        }
    }

    /** The Raft log's part: the kind alone. */
    byte[] header() {
        return new byte[] {kind.code};
    }

    /** The whole command as a client message: kind, then body. */
    byte[] encode() {
        byte[] b = new byte[body.length + 1];
        b[0] = kind.code;
        System.arraycopy(body, 0, b, 1, body.length);
        return b;
    }

    static Command decode(byte[] message) {
        if (message.length == 0) {
            throw new IllegalArgumentException("log entry: expected a command, got no bytes");
        }
        return new Command(Kind.of(message[0]), Arrays.copyOfRange(message, 1, message.length));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Command c && c.kind == kind && Arrays.equals(c.body, body);
    }

    @Override
    public int hashCode() {
        return 31 * kind.hashCode() + Arrays.hashCode(body);
    }

    @Override
    public String toString() {
        return "Command[" + kind + ", " + body.length + " bytes]";
    }
}
