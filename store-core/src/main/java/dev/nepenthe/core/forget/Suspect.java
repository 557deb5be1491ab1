package dev.nepenthe.core.forget;

/**
 * A surviving record verification flagged, named by id and score only (never by content), for the
 * operator to forget too or to clear with a recorded override.
 *
 * @param reason {@code vector-residue} (a surviving vector within the probe threshold of a
 *     forgotten one), {@code text-residue} (surviving text holding most of a forgotten text's
 *     distinctive terms), {@code join-key} (surviving metadata names the forgotten subject or a
 *     forgotten record), {@code declared-identifier} (surviving metadata or text holds an
 *     identifier the request declared), {@code regeneration-required} (derived from a forgotten
 *     record under a collection whose policy holds derived records for regeneration)
 * @param collection the collection the surviving record is in
 * @param recordId the surviving record's id
 * @param score cosine similarity for a vector residue, the share of the forgotten text's
 *     distinctive terms for a text residue, otherwise NaN
 * @param relatedTo the forgotten record it resembles or derives from, or the metadata key that
 *     names the subject
 */
public record Suspect(
        String reason, String collection, String recordId, double score, String relatedTo) {}
