package dev.nepenthe.cluster.history;

/**
 * One client operation of a history as the client saw it: what it asked, of which replica, when it
 * was invoked and when it completed (System.nanoTime), and what came back. An operation whose
 * outcome the client cannot know (a deadline, an unavailable replica) has no completion time: it
 * may take effect at any moment after its invocation, or never.
 *
 * @param seq the operation's number in the history
 * @param thread the client thread (-1 for the final reads)
 * @param node the replica asked
 * @param kind what was asked
 * @param key the record id (null for a forget, which names a subject)
 * @param subject the subject's index: the key's owner, or the forgotten subject
 * @param write the upsert's write number (-1 for other kinds)
 * @param outcome what came back
 * @param seen a get's write number ({@link #NOT_FOUND} when absent), a delete's count, else -1
 * @param invoked when the call was made
 * @param completed when it returned; {@link #NEVER} when the outcome is unknown
 * @param note the status or operation id, for a failure's message
 */
record Op(
        int seq,
        int thread,
        int node,
        Kind kind,
        String key,
        int subject,
        long write,
        Outcome outcome,
        long seen,
        long invoked,
        long completed,
        String note) {

    /** A get's result when the record is absent. */
    static final long NOT_FOUND = -1;

    /** The completion time of an operation whose outcome is unknown. */
    static final long NEVER = Long.MAX_VALUE;

    enum Kind {
        UPSERT,
        GET,
        STALE_GET,
        DELETE,
        FORGET
    }

    enum Outcome {
        /** Done, with the result in {@link #seen} for a get or a delete. */
        OK,
        /** An upsert of a forgotten subject's record, refused: no effect. */
        REFUSED,
        /** A write that may or may not have taken effect. */
        UNKNOWN,
        /** A read that failed: it says nothing. */
        FAILED,
        /** A status the model has no place for: the test fails on it. */
        UNEXPECTED
    }

    boolean isWrite() {
        return kind == Kind.UPSERT || kind == Kind.DELETE || kind == Kind.FORGET;
    }

    /** One line for a failure's message, times in milliseconds from {@code origin}. */
    String describe(long origin) {
        StringBuilder b = new StringBuilder();
        b.append(String.format("#%d t%d n%d %s", seq, thread, node + 1, kind));
        b.append(key == null ? " subject-" + subject : " " + key);
        if (write >= 0) {
            b.append(" w=").append(write);
        }
        b.append(String.format(" [%.1f, ", (invoked - origin) / 1e6));
        b.append(completed == NEVER ? "?" : String.format("%.1f", (completed - origin) / 1e6));
        b.append("] ").append(outcome);
        if (outcome == Outcome.OK && (kind == Kind.GET || kind == Kind.STALE_GET)) {
            b.append(seen == NOT_FOUND ? " NOT_FOUND" : " saw w=" + seen);
        } else if (outcome == Outcome.OK && kind == Kind.DELETE) {
            b.append(" deleted=").append(seen);
        }
        if (note != null && !note.isEmpty()) {
            b.append(" (").append(note).append(')');
        }
        return b.toString();
    }
}
