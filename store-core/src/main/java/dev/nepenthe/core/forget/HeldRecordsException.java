package dev.nepenthe.core.forget;

import java.util.List;

/**
 * A plain delete (of records, of a subject, or of a collection) or a replacement refused because a
 * legal hold keeps some of what it would remove: held data stays until its hold is lifted, whatever
 * asks for it to go. Nothing of the delete was done. The message names the holds and how many
 * records they keep, never a record's content, id or subject.
 */
public final class HeldRecordsException extends IllegalStateException {

    /** The holds that keep the records, sorted. */
    private final List<String> holds;

    /**
     * Builds the exception.
     *
     * @param what what was refused, e.g. "deleting 3 records of collection 'docs'"
     * @param held how many of the records a hold keeps (0 when the hold names the subject alone)
     * @param holds the ids of the holds, sorted
     */
    public HeldRecordsException(String what, int held, List<String> holds) {
        super(
                what
                        + " is refused: "
                        + (held == 0 ? "its subject is" : held + " of the records are")
                        + " under legal hold "
                        + String.join(", ", holds)
                        + "; held data is kept until the hold is lifted, so none of it was done");
        this.holds = List.copyOf(holds);
    }

    /**
     * The holds that refused the delete.
     *
     * @return hold ids, sorted
     */
    public List<String> holds() {
        return holds;
    }
}
