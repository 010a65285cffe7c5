import { randomUUID } from "node:crypto";
import { SignJWT, errors as joseErrors, jwtVerify } from "jose";
import { UnauthenticatedError } from "../shared/errors.js";

export interface ThreadTokenClaims {
  threadId: string;
  organizationId: string;
}

/** Short-lived HS256 JWTs scoped to one thread; the algorithm is pinned so `alg: none` or RS/HS confusion cannot pass. */
export class ThreadTokens {
  private readonly key: Uint8Array;

  constructor(
    secret: string,
    private readonly ttlSeconds: number,
  ) {
    this.key = new TextEncoder().encode(secret);
  }

  async issue(claims: ThreadTokenClaims): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ org: claims.organizationId, scope: "thread" })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setSubject(claims.threadId)
      .setIssuedAt(now)
      .setExpirationTime(now + this.ttlSeconds)
      .setJti(randomUUID())
      .sign(this.key);
  }

  async verify(token: string): Promise<ThreadTokenClaims> {
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: ["HS256"], requiredClaims: ["sub", "exp", "iat", "jti"] });
      if (payload.scope !== "thread" || typeof payload.org !== "string" || typeof payload.sub !== "string") {
        throw new UnauthenticatedError("Invalid token");
      }
      return { threadId: payload.sub, organizationId: payload.org };
    } catch (error) {
      if (error instanceof UnauthenticatedError) throw error;
      if (error instanceof joseErrors.JWTExpired) throw new UnauthenticatedError("Token has expired");
      throw new UnauthenticatedError("Invalid token");
    }
  }
}

export function looksLikeJwt(credential: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$/.test(credential);
}
