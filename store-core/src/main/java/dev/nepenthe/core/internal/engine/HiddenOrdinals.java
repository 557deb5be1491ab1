package dev.nepenthe.core.internal.engine;

import java.util.HashMap;
import java.util.Map;
import org.roaringbitmap.RoaringBitmap;

/**
 * The ordinals no read may return, by the operation that hid them (a forget, a legal hold, or the
 * removal of replaced and deleted records). Published as immutable bitmaps replaced whole, so a
 * search checks them at materialisation without a lock; operations hide and lift theirs from any
 * thread.
 */
final class HiddenOrdinals {
    /** The operation whose records are hidden from searches only (a get still finds them). */
    private final String searchesOnly;

    private final Map<String, RoaringBitmap> byOperation = new HashMap<>();

    /** Every hidden ordinal. */
    private volatile RoaringBitmap all = new RoaringBitmap();

    /**
     * The part of {@link #all} that forgets and holds put there, which a get honours; a record
     * being replaced is hidden from searches only, so a get finds one version or the other.
     */
    private volatile RoaringBitmap byForgetsAndHolds = new RoaringBitmap();

    HiddenOrdinals(String searchesOnly) {
        this.searchesOnly = searchesOnly;
    }

    /** Every hidden ordinal (immutable). */
    RoaringBitmap all() {
        return all;
    }

    /** The ordinals forgets and holds hide (immutable). */
    RoaringBitmap byForgetsAndHolds() {
        return byForgetsAndHolds;
    }

    /** Hides ordinals under an operation and publishes. */
    void hide(String operation, RoaringBitmap ords) {
        synchronized (byOperation) {
            byOperation.merge(operation, ords.clone(), (a, b) -> RoaringBitmap.or(a, b));
            publish();
        }
    }

    /** Lifts what an operation hid. */
    void unhide(String operation) {
        synchronized (byOperation) {
            if (byOperation.remove(operation) != null) {
                publish();
            }
        }
    }

    /**
     * Takes freed ordinals out of every operation's set: a record that reuses one is not hidden.
     */
    void release(RoaringBitmap ords) {
        synchronized (byOperation) {
            byOperation.values().forEach(b -> b.andNot(ords));
            byOperation.values().removeIf(RoaringBitmap::isEmpty);
            publish();
        }
    }

    private void publish() {
        RoaringBitmap every = new RoaringBitmap();
        RoaringBitmap marked = new RoaringBitmap();
        byOperation.forEach(
                (op, b) -> {
                    every.or(b);
                    if (!op.equals(searchesOnly)) {
                        marked.or(b);
                    }
                });
        byForgetsAndHolds = marked;
        all = every;
    }
}
