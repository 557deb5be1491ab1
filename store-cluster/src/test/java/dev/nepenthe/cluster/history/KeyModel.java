package dev.nepenthe.cluster.history;

/**
 * The sequential model of one record, its state packed in a long: the write number it holds (or
 * none) and whether its subject is forgotten. An upsert sets the value unless the subject is
 * forgotten, when it is refused; a delete removes it and counts what it removed; a forget of the
 * subject removes it and refuses every later upsert; a get returns the value or NOT_FOUND. Write
 * numbers no read ever saw are folded into one value, {@link #UNSEEN}: no read tells them apart, so
 * the search need not either.
 */
final class KeyModel {

    /** No record. */
    static final long EMPTY = -1;

    /** Some write no read of this key saw. */
    static final long UNSEEN = -2;

    /** A step the model does not allow. */
    static final long INVALID = -1;

    /** The state before any operation: no record, subject not forgotten. */
    static final long INITIAL = pack(EMPTY, false);

    private KeyModel() {}

    static long pack(long value, boolean forgotten) {
        return ((value + 2) << 1) | (forgotten ? 1 : 0);
    }

    static long value(long state) {
        return (state >> 1) - 2;
    }

    static boolean forgotten(long state) {
        return (state & 1) != 0;
    }

    /**
     * The state after {@code op} (its upsert value already folded to {@code written}), or {@link
     * #INVALID} when the op's result contradicts the model in {@code state}.
     */
    static long step(Op op, long written, long state) {
        long v = value(state);
        boolean f = forgotten(state);
        boolean unknown = op.outcome() == Op.Outcome.UNKNOWN;
        return switch (op.kind()) {
            case UPSERT -> {
                if (unknown) {
                    yield f ? state : pack(written, false);
                }
                if (op.outcome() == Op.Outcome.REFUSED) {
                    yield f ? state : INVALID;
                }
                yield f ? INVALID : pack(written, false);
            }
            case DELETE -> {
                if (unknown) {
                    yield pack(EMPTY, f);
                }
                if (f) {
                    // The engine lets a delete reach a record a forget has blocked but its cleanup
                    // has not yet removed (a REGENERATE forget relies on it: the operator deletes
                    // the derived records it holds), so such a delete counts 0 or 1; either way
                    // the record is gone, which is what this model checks.
                    yield op.seen() == 0 || op.seen() == 1 ? pack(EMPTY, true) : INVALID;
                }
                long expected = v == EMPTY ? 0 : 1;
                yield op.seen() == expected ? pack(EMPTY, f) : INVALID;
            }
            case FORGET -> pack(EMPTY, true);
            case GET, STALE_GET -> {
                boolean match =
                        (v == EMPTY && op.seen() == Op.NOT_FOUND) || (v >= 0 && op.seen() == v);
                yield match ? state : INVALID;
            }
        };
    }

    static String describe(long state) {
        long v = value(state);
        String value = v == EMPTY ? "no record" : v == UNSEEN ? "a write no read saw" : "w=" + v;
        return value + (forgotten(state) ? ", subject forgotten" : "");
    }
}
