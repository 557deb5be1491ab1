package dev.nepenthe.core.forget;

/**
 * A write refused because it falls in the scope of a forget operation marked before it arrived: a
 * stale queue message for a forgotten subject, a re-upload of a forgotten record or source version,
 * or a derived record whose {@code derivedFrom} names a forgotten record. The batch it was part of
 * is stored not at all. The message names the batch position and the operation, never the record's
 * content or its subject.
 */
public final class ForgottenScopeException extends IllegalArgumentException {
    /** The forget operation whose scope the write fell in. */
    private final String operationId;

    /** The refused record's position in its batch. */
    private final int batchPosition;

    /**
     * Builds the exception; the message names the position and the operation.
     *
     * @param operationId the forget operation whose scope the record falls in
     * @param batchPosition the record's position in its batch, from 0
     * @param why the rule it broke, without the record's content or subject
     */
    public ForgottenScopeException(String operationId, int batchPosition, String why) {
        super(
                "record at batch position "
                        + batchPosition
                        + " is refused: "
                        + why
                        + " (forget operation "
                        + operationId
                        + "); writes after a forget's mark are refused, so nothing of the batch was"
                        + " stored");
        this.operationId = operationId;
        this.batchPosition = batchPosition;
    }

    /**
     * The forget operation that refused the write.
     *
     * @return the operation's id
     */
    public String operationId() {
        return operationId;
    }

    /**
     * Where the refused record sits in its batch.
     *
     * @return the position, from 0
     */
    public int batchPosition() {
        return batchPosition;
    }
}
