package dev.nepenthe.core.forget;

import dev.nepenthe.core.VectorRecord;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * An erasure request: what to forget in which tenant, why, and under which idempotency key. The
 * same key always returns the same operation (a retried request never forgets twice, and a key
 * reused for a different request is refused).
 *
 * @param tenant the isolation boundary; a forget never touches another tenant's records
 * @param scope what to forget
 * @param idempotencyKey the caller's request id (only its keyed hash is stored)
 * @param reasonCode why, as a short code ("gdpr-art17", "user-request", "retention"); it is written
 *     into evidence, so it must not hold personal data: letters, digits, '.', '_', '-'
 * @param probeThreshold cosine similarity at or above which a surviving record is a suspected
 *     residue of a forgotten one (the verification probe); null (the default) runs the store's
 *     {@link ProbePolicy}, and a value may only tighten it (the store refuses a looser one)
 * @param level repair indexes in place (default) or rebuild them afterwards, see {@link
 *     ErasureLevel}
 * @param identifiers names, emails or phone numbers the subject is known by, which verification
 *     looks for in the metadata and text of every surviving record of the tenant (a record that
 *     names them is a suspect). Held like the scope: sealed under the operation's own key and
 *     destroyed when it seals; evidence holds only their number. Empty by default.
 * @param exactProbe true runs the exact negative-space probe in every collection, even where the
 *     store's {@link ProbePolicy} would search the index for large tenants; false (the default)
 *     follows the policy. The receipt says which probe ran where.
 */
public record ForgetRequest(
        String tenant,
        ForgetScope scope,
        String idempotencyKey,
        String reasonCode,
        Double probeThreshold,
        ErasureLevel level,
        List<String> identifiers,
        boolean exactProbe) {

    /** Most identifiers one request may declare. */
    public static final int MAX_IDENTIFIERS = 64;

    private static final Pattern REASON = Pattern.compile("[A-Za-z0-9._-]{1,64}");

    /**
     * Checks the request. What depends on the store (the probe policy, identifiers that name
     * nothing matchable, a reused idempotency key) is checked by {@code forget}.
     *
     * @throws IllegalArgumentException if an identifier or the reason code is malformed, there are
     *     more than {@value #MAX_IDENTIFIERS} identifiers, the idempotency key is blank or the
     *     probe threshold is outside (-1, 1]; messages about identifiers and reason codes give
     *     lengths, never the text
     * @throws NullPointerException if anything but the probe threshold is null
     */
    public ForgetRequest {
        Objects.requireNonNull(tenant, "forget request tenant");
        Objects.requireNonNull(scope, "forget request scope");
        Objects.requireNonNull(idempotencyKey, "forget request idempotency key");
        Objects.requireNonNull(reasonCode, "forget request reason code");
        Objects.requireNonNull(level, "forget request erasure level");
        Objects.requireNonNull(identifiers, "forget request identifiers");
        identifiers = List.copyOf(identifiers);
        if (identifiers.size() > MAX_IDENTIFIERS) {
            throw new IllegalArgumentException(
                    "forget request identifiers: expected at most "
                            + MAX_IDENTIFIERS
                            + ", got "
                            + identifiers.size());
        }
        for (String id : identifiers) {
            if (id.strip().length() < 2 || id.length() > 256) {
                // The message gives lengths only: identifiers are personal data.
                throw new IllegalArgumentException(
                        "forget request identifier: expected 2 to 256 characters, got "
                                + id.strip().length());
            }
        }
        if (idempotencyKey.isBlank()) {
            throw new IllegalArgumentException(
                    "forget request idempotency key: expected a non-blank key, got a blank one");
        }
        checkReasonCode(reasonCode);
        if (probeThreshold != null && !(probeThreshold > -1 && probeThreshold <= 1)) {
            throw new IllegalArgumentException(
                    "forget request probe threshold: expected a cosine in (-1, 1], got "
                            + probeThreshold);
        }
    }

    /**
     * A request that follows the store's probe policy on which probe runs.
     *
     * @param tenant the tenant
     * @param scope what to forget
     * @param idempotencyKey the caller's request id
     * @param reasonCode why, as a code
     * @param probeThreshold a tighter probe threshold, or null for the store's
     * @param level repair in place or rebuild
     * @param identifiers names, emails or phone numbers the subject is known by
     * @throws IllegalArgumentException as the canonical constructor does
     */
    public ForgetRequest(
            String tenant,
            ForgetScope scope,
            String idempotencyKey,
            String reasonCode,
            Double probeThreshold,
            ErasureLevel level,
            List<String> identifiers) {
        this(tenant, scope, idempotencyKey, reasonCode, probeThreshold, level, identifiers, false);
    }

    /**
     * A request that declares no identifiers.
     *
     * @param tenant the tenant
     * @param scope what to forget
     * @param idempotencyKey the caller's request id
     * @param reasonCode why, as a code
     * @param probeThreshold a tighter probe threshold, or null for the store's
     * @param level repair in place or rebuild
     * @throws IllegalArgumentException as the canonical constructor does
     */
    public ForgetRequest(
            String tenant,
            ForgetScope scope,
            String idempotencyKey,
            String reasonCode,
            Double probeThreshold,
            ErasureLevel level) {
        this(tenant, scope, idempotencyKey, reasonCode, probeThreshold, level, List.of());
    }

    /**
     * A request that repairs indexes in place and declares no identifiers.
     *
     * @param tenant the tenant
     * @param scope what to forget
     * @param idempotencyKey the caller's request id
     * @param reasonCode why, as a code
     * @param probeThreshold a tighter probe threshold, or null for the store's
     * @throws IllegalArgumentException as the canonical constructor does
     */
    public ForgetRequest(
            String tenant,
            ForgetScope scope,
            String idempotencyKey,
            String reasonCode,
            Double probeThreshold) {
        this(tenant, scope, idempotencyKey, reasonCode, probeThreshold, ErasureLevel.REPAIR);
    }

    /**
     * Checks a reason code: 1 to 64 letters, digits, '.', '_' or '-'. Codes go into evidence, so
     * free text (which could name a person) is refused; the message gives only its length.
     *
     * @param reasonCode the code to check
     * @throws IllegalArgumentException if it is null or not such a code
     */
    public static void checkReasonCode(String reasonCode) {
        if (reasonCode == null || !REASON.matcher(reasonCode).matches()) {
            throw new IllegalArgumentException(
                    "reason code: expected 1 to 64 letters, digits, '.', '_' or '-' (a code,"
                            + " not free text), got "
                            + (reasonCode == null
                                    ? "null"
                                    : reasonCode.length() + " characters that are not"));
        }
    }

    /**
     * A request in the default tenant under the store's probe policy, repairing in place, with no
     * identifiers.
     *
     * @param scope what to forget
     * @param idempotencyKey the caller's request id
     * @param reasonCode why, as a code
     * @return the request
     * @throws IllegalArgumentException if the key is blank or the reason code malformed
     */
    public static ForgetRequest of(ForgetScope scope, String idempotencyKey, String reasonCode) {
        return new ForgetRequest(
                VectorRecord.DEFAULT_TENANT, scope, idempotencyKey, reasonCode, null);
    }

    /**
     * This request in another tenant.
     *
     * @param t the tenant
     * @return a new request
     */
    public ForgetRequest inTenant(String t) {
        return new ForgetRequest(
                t,
                scope,
                idempotencyKey,
                reasonCode,
                probeThreshold,
                level,
                identifiers,
                exactProbe);
    }

    /**
     * A request that also looks for these names, emails or phone numbers of the subject (see the
     * record's parameters). Replaces any identifiers declared before.
     *
     * @param ids the identifiers, at most {@value #MAX_IDENTIFIERS}, each 2 to 256 characters
     * @return a new request
     * @throws IllegalArgumentException if there are too many or one has the wrong length
     */
    public ForgetRequest withIdentifiers(List<String> ids) {
        return new ForgetRequest(
                tenant, scope, idempotencyKey, reasonCode, probeThreshold, level, ids, exactProbe);
    }

    /**
     * Identifiers are personal data: they never appear in a request's string form.
     *
     * @return the tenant, scope kind, reason code, threshold, level, number of identifiers and
     *     probe choice
     */
    @Override
    public String toString() {
        return "ForgetRequest[tenant="
                + tenant
                + ", scope="
                + scope.kind()
                + ", reasonCode="
                + reasonCode
                + ", probeThreshold="
                + probeThreshold
                + ", level="
                + level
                + ", identifiers="
                + identifiers.size()
                + ", exactProbe="
                + exactProbe
                + "]";
    }

    /**
     * A request that tightens the store's probe policy to {@code threshold} (see {@link
     * ProbePolicy#effective}).
     *
     * @param threshold the cosine at or above which a survivor is a suspect; the store refuses it
     *     at {@code forget} unless it lies within its policy
     * @return a new request
     * @throws IllegalArgumentException if the threshold is outside (-1, 1]
     */
    public ForgetRequest withProbeThreshold(double threshold) {
        return new ForgetRequest(
                tenant,
                scope,
                idempotencyKey,
                reasonCode,
                threshold,
                level,
                identifiers,
                exactProbe);
    }

    /**
     * This request at another erasure level.
     *
     * @param l repair in place or rebuild
     * @return a new request
     */
    public ForgetRequest withLevel(ErasureLevel l) {
        return new ForgetRequest(
                tenant,
                scope,
                idempotencyKey,
                reasonCode,
                probeThreshold,
                l,
                identifiers,
                exactProbe);
    }

    /**
     * This request with the exact probe in every collection, whatever the store's policy says about
     * large tenants (see {@link ProbePolicy}): slower where the tenant is large, and it cannot miss
     * a survivor the index would not have found.
     *
     * @return a new request
     */
    public ForgetRequest withExactProbe() {
        return new ForgetRequest(
                tenant,
                scope,
                idempotencyKey,
                reasonCode,
                probeThreshold,
                level,
                identifiers,
                true);
    }
}
