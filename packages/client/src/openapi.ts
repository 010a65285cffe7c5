// Generated from GET /openapi.json by `npm run client:schema`; a test fails when it is out of date.

export interface paths {
    "/admin/api-keys/{key_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Revoke an API key at once */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    key_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/api-keys/{key_id}/rotate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Replace an API key: a new key of the same organization (shown once), the old one revoked at once */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    key_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            api_key: string;
                            id: string;
                            replaced_key_id: string;
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/organizations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List organizations, oldest first */
        get: {
            parameters: {
                query: {
                    /** @description Opaque URL-safe Base64 cursor from a previous response */
                    cursor?: string;
                    limit: number;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            organizations: {
                                /** Format: date-time */
                                created_at: string;
                                id: string;
                                name: string;
                            }[];
                            pagination: {
                                cursor: string | null;
                            };
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        /** Create an organization with its first API key (shown once) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        name: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            api_key: string;
                            id: string;
                            name: string;
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/organizations/{org_id}/api-keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List an organization's API keys (redacted), with when each was created, last used and revoked */
        get: {
            parameters: {
                query: {
                    /** @description Opaque URL-safe Base64 cursor from a previous response */
                    cursor?: string;
                    limit: number;
                };
                header?: never;
                path: {
                    org_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            api_keys: {
                                /** Format: date-time */
                                created_at: string;
                                /** @description The key's redacted form, `sk_…abcd`; the key itself is never shown again */
                                display: string;
                                id: string;
                                last_used_at: string | null;
                                revoked_at: string | null;
                            }[];
                            pagination: {
                                cursor: string | null;
                            };
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        /** Create another API key for an organization (shown once) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    org_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            api_key: string;
                            id: string;
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/organizations/{org_id}/projects": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List an organization's projects, oldest first */
        get: {
            parameters: {
                query: {
                    /** @description Opaque URL-safe Base64 cursor from a previous response */
                    cursor?: string;
                    limit: number;
                };
                header?: never;
                path: {
                    org_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            pagination: {
                                cursor: string | null;
                            };
                            projects: {
                                config_version_id: string;
                                /** Format: date-time */
                                created_at: string;
                                id: string;
                                name: string;
                            }[];
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        /** Create a project with its first configuration version */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    org_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        config: {
                            agent?: {
                                api_key?: string;
                                base_url?: string;
                                fallback?: string;
                                followup_prompt?: string;
                                greeting?: string;
                                knowledge?: {
                                    answer: string;
                                    question: string;
                                }[];
                                max_history_messages?: number;
                                max_tokens?: number;
                                model?: string;
                                provider?: "builtin" | "openai" | "anthropic";
                                summary_prompt?: string;
                                system_prompt?: string;
                                temperature?: number;
                                tool_secret?: string;
                                tools?: {
                                    description?: string;
                                    name: string;
                                    number?: string;
                                    parameters?: {
                                        [key: string]: unknown;
                                    };
                                    speak_during_execution?: string;
                                    timeout_ms?: number;
                                    type?: "http" | "end_call" | "transfer_call";
                                    url?: string;
                                }[];
                            };
                            conversation?: {
                                lock_on_end?: boolean;
                            };
                            json_input?: {
                                schema?: {
                                    [key: string]: unknown;
                                };
                            };
                            pricing?: {
                                message_usd?: number;
                                voice_minute_usd?: number;
                            };
                            simulation?: {
                                api_key?: string;
                                base_url?: string;
                                criteria?: {
                                    description: string;
                                    key: string;
                                    required?: boolean;
                                }[];
                                model?: string;
                                provider?: "builtin" | "openai" | "anthropic";
                                temperature?: number;
                            };
                            speech?: {
                                end_of_turn_ms?: number;
                                min_end_of_turn_ms?: number;
                                stt?: {
                                    api_key?: string;
                                    base_url?: string;
                                    keywords?: string[];
                                    language?: string;
                                    model?: string;
                                    provider?: "pocketsphinx" | "openai";
                                };
                                tts?: {
                                    api_key?: string;
                                    base_url?: string;
                                    model?: string;
                                    provider?: "flite" | "espeak" | "openai";
                                    voice?: string;
                                };
                            };
                            voice?: {
                                accounts?: {
                                    /** Format: uuid */
                                    id: string;
                                    phone_numbers: string[];
                                }[];
                                analysis_fields?: {
                                    description?: string;
                                    name: string;
                                    type: "boolean" | "string" | "number";
                                }[];
                                inbound?: {
                                    enabled: boolean;
                                    greeting?: string;
                                    max_call_seconds?: number;
                                };
                                max_call_seconds?: number;
                                provider?: "simulated" | "twilio" | "retell";
                                retell?: {
                                    agent_id?: string;
                                    api_base_url?: string;
                                    api_key?: string;
                                };
                                simulated?: {
                                    ring_ms?: number;
                                    script?: string[];
                                    turn_ms?: number;
                                };
                                twilio?: {
                                    account_sid?: string;
                                    api_base_url?: string;
                                    auth_token?: string;
                                };
                            };
                        };
                        name: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            config_version_id: string;
                            id: string;
                            name: string;
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/projects/{project_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Show a project with its current configuration (secrets never returned) and version ids */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    project_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": unknown;
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/projects/{project_id}/config": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** Publish a new immutable configuration version, which becomes the default */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    project_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        config: {
                            agent?: {
                                api_key?: string;
                                base_url?: string;
                                fallback?: string;
                                followup_prompt?: string;
                                greeting?: string;
                                knowledge?: {
                                    answer: string;
                                    question: string;
                                }[];
                                max_history_messages?: number;
                                max_tokens?: number;
                                model?: string;
                                provider?: "builtin" | "openai" | "anthropic";
                                summary_prompt?: string;
                                system_prompt?: string;
                                temperature?: number;
                                tool_secret?: string;
                                tools?: {
                                    description?: string;
                                    name: string;
                                    number?: string;
                                    parameters?: {
                                        [key: string]: unknown;
                                    };
                                    speak_during_execution?: string;
                                    timeout_ms?: number;
                                    type?: "http" | "end_call" | "transfer_call";
                                    url?: string;
                                }[];
                            };
                            conversation?: {
                                lock_on_end?: boolean;
                            };
                            json_input?: {
                                schema?: {
                                    [key: string]: unknown;
                                };
                            };
                            pricing?: {
                                message_usd?: number;
                                voice_minute_usd?: number;
                            };
                            simulation?: {
                                api_key?: string;
                                base_url?: string;
                                criteria?: {
                                    description: string;
                                    key: string;
                                    required?: boolean;
                                }[];
                                model?: string;
                                provider?: "builtin" | "openai" | "anthropic";
                                temperature?: number;
                            };
                            speech?: {
                                end_of_turn_ms?: number;
                                min_end_of_turn_ms?: number;
                                stt?: {
                                    api_key?: string;
                                    base_url?: string;
                                    keywords?: string[];
                                    language?: string;
                                    model?: string;
                                    provider?: "pocketsphinx" | "openai";
                                };
                                tts?: {
                                    api_key?: string;
                                    base_url?: string;
                                    model?: string;
                                    provider?: "flite" | "espeak" | "openai";
                                    voice?: string;
                                };
                            };
                            voice?: {
                                accounts?: {
                                    /** Format: uuid */
                                    id: string;
                                    phone_numbers: string[];
                                }[];
                                analysis_fields?: {
                                    description?: string;
                                    name: string;
                                    type: "boolean" | "string" | "number";
                                }[];
                                inbound?: {
                                    enabled: boolean;
                                    greeting?: string;
                                    max_call_seconds?: number;
                                };
                                max_call_seconds?: number;
                                provider?: "simulated" | "twilio" | "retell";
                                retell?: {
                                    agent_id?: string;
                                    api_base_url?: string;
                                    api_key?: string;
                                };
                                simulated?: {
                                    ring_ms?: number;
                                    script?: string[];
                                    turn_ms?: number;
                                };
                                twilio?: {
                                    account_sid?: string;
                                    api_base_url?: string;
                                    auth_token?: string;
                                };
                            };
                        };
                    };
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            config_version_id: string;
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
            };
        };
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/projects/{project_id}/versions/{version_id}/config": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Show one configuration version of a project (secrets never returned), to compare versions or publish an earlier one again */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    project_id: string;
                    version_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description The configuration as published, defaults filled in; each credential only as `…_set` */
                            config: {
                                [key: string]: unknown;
                            };
                            /** Format: date-time */
                            created_at: string;
                            /** @description Whether this version is the project's default */
                            current: boolean;
                            id: string;
                            project_id: string;
                            /** @description 1 for the first version, then one more for each publish */
                            version: number;
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/calls": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The organization's calls, newest first (keyset cursor pagination) */
        get: {
            parameters: {
                query: {
                    /** @description Repeat to allow several */
                    call_type?: ("phone_call" | "web_call")[];
                    /** @description Opaque URL-safe Base64 cursor from a previous response */
                    cursor?: string;
                    /** @description Repeat to allow several */
                    direction?: ("inbound" | "outbound")[];
                    /** @description ISO 8601 date or datetime */
                    from_date?: string;
                    limit: number;
                    project_name?: string;
                    /** @description Repeat to allow several */
                    status?: ("queued" | "scheduled" | "ongoing" | "ended" | "error")[];
                    thread_id?: string;
                    /** @description ISO 8601 date or datetime */
                    to_date?: string;
                };
                header: {
                    /** @description API key or thread token, raw or as `Bearer <credential>` */
                    authorization: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            calls: {
                                call_type: string;
                                conversation_id: number | null;
                                created_at: string;
                                direction: string | null;
                                disconnection_reason: string | null;
                                duration_ms: number | null;
                                end_timestamp: number | null;
                                from_number: string | null;
                                id: string;
                                scheduled_for: string | null;
                                start_timestamp: number | null;
                                status: string;
                                thread_id: string;
                                to_number: string | null;
                            }[];
                            pagination: {
                                cursor: string | null;
                            };
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/calls/{call_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One call with its transcript, recording URL and analysis */
        get: {
            parameters: {
                query?: never;
                header: {
                    /** @description API key or thread token, raw or as `Bearer <credential>` */
                    authorization: string;
                };
                path: {
                    call_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            call_analysis: {
                                call_successful: boolean | null;
                                call_summary: string;
                                custom_analysis_data: {
                                    [key: string]: unknown;
                                };
                                user_sentiment: string;
                            } | null;
                            call_type: string;
                            conversation_id: number | null;
                            created_at: string;
                            direction: string | null;
                            disconnection_reason: string | null;
                            duration_ms: number | null;
                            end_timestamp: number | null;
                            from_number: string | null;
                            id: string;
                            recording_url: string | null;
                            scheduled_for: string | null;
                            start_timestamp: number | null;
                            status: string;
                            thread_id: string;
                            to_number: string | null;
                            transcript: string | null;
                            transcript_object: {
                                content: string;
                                role: string;
                                words: {
                                    end: number;
                                    start: number;
                                    word: string;
                                }[];
                            }[] | null;
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/chat": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send a user message to a thread and get the AI reply, whole or streamed
         * @description With `streaming: true` the reply is NDJSON: `{"token","index"}` lines, then the complete chat response; with `Accept: text/event-stream` the same as server-sent events (`token`, `message`, `error`). With `simulate`, a whole simulated conversation (needs the API key): token lines carry `turn`, the index of their turn in `extras.simulation.turns`; see docs/simulation.md.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description API key or thread token, raw or as `Bearer <credential>` */
                    authorization: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        config_version_id?: string;
                        message: string;
                        service_config_name: string;
                        simulate?: {
                            /** @description The kind of agent the simulated user talks to. */
                            agent_type?: string;
                            /** @description How the simulated user behaves. */
                            behavioural_prompt?: string;
                            /**
                             * @description Store the conversation in a new SIMULATION thread; false is a dry run.
                             * @default false
                             */
                            create: boolean;
                            /**
                             * @description Judge the conversation.
                             * @default false
                             */
                            evaluate: boolean;
                            industry?: string;
                            /**
                             * @description Scripted user turns played after `message`, before the simulated user takes over.
                             * @default []
                             */
                            initial_messages: string[];
                            /**
                             * @description User turns at most, `message` and `initial_messages` included.
                             * @default 5
                             */
                            max_turns: number;
                            /** @description What the simulated user wants. */
                            topic?: string;
                        };
                        /** @default false */
                        start_new_conversation: boolean;
                        /** @default false */
                        streaming: boolean;
                        thread_id: string;
                        /** @default user */
                        user_type: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            extras: {
                                conversation_id: number | null;
                                reply_message_id: string | null;
                                /** @description With `simulate` only; the three ids are then the last turn's, null in a dry run. */
                                simulation?: {
                                    evaluation?: {
                                        criteria: {
                                            key: string;
                                            passed: boolean;
                                            reasoning: string;
                                            score: number;
                                        }[];
                                        judge: "llm" | "heuristic";
                                        /** @description Why the heuristic judge stands in for the model's, when the model judge failed */
                                        note?: string;
                                        score: number;
                                        verdict: "pass" | "fail";
                                    };
                                    id: string;
                                    stop_reason: "max_turns" | "user_ended" | "agent_ended";
                                    thread_id: string | null;
                                    turns: {
                                        message: string;
                                        role: "user" | "assistant";
                                        source: "message" | "scripted" | "simulated" | "agent";
                                    }[];
                                };
                                /** @description The tools the agent called in this turn; absent when none. */
                                tool_calls?: {
                                    /** @description The arguments the model wrote, parsed (the text itself when it was not JSON). */
                                    arguments: unknown;
                                    duration_ms: number;
                                    id: string;
                                    name: string;
                                    /** @description The receiver's answer (JSON parsed, else text, first 16 KiB), or `{"error": "…"}`. */
                                    result: unknown;
                                    status: "ok" | "error" | "timeout";
                                }[];
                                user_message_id: string | null;
                            };
                            message: string;
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
                /** @description Error */
                502: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                504: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Liveness: the process answers */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            status: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/legacy/chat": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Earlier generation: send a message and get the AI reply */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description API key or thread token, raw or as `Bearer <credential>` */
                    authorization: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        message: string;
                        service_mode_name: string;
                        /** @default false */
                        start_new_conversation: boolean;
                        /** @default false */
                        streaming: boolean;
                        thread_id: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            message: string;
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
                /** @description Error */
                502: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                504: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/legacy/create_thread": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Earlier generation: create a thread */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description API key or thread token, raw or as `Bearer <credential>` */
                    authorization: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            thread_id: string;
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/legacy/end_conversation": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Earlier generation: end the active conversation; the next message opens a new one */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description API key or thread token, raw or as `Bearer <credential>` */
                    authorization: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        thread_id: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            message: string;
                        };
                    };
                };
                /** @description Error */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/legacy/generate-token/{thread_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Earlier generation: a thread token, as POST /threads/{thread_id}/token */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description API key or thread token, raw or as `Bearer <credential>` */
                    authorization: string;
                };
                path: {
                    thread_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            access_token: string;
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/legacy/get_followup": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Earlier generation: a proactive AI message from the project's follow-up instructions */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description API key or thread token, raw or as `Bearer <credential>` */
                    authorization: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        service_mode_name: string;
                        /** @default false */
                        start_new_conversation: boolean;
                        /** @default false */
                        streaming: boolean;
                        thread_id: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            message: string;
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
                /** @description Error */
                502: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                504: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/legacy/retrieve_conversation_summary": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Earlier generation: a summary of the thread's latest conversation
         * @description On failure the HTTP status is `status_code` and the body `{error, status_code}`.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description API key or thread token, raw or as `Bearer <credential>` */
                    authorization: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        thread_id: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            conversation_summary: string;
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            status_code: number;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
                /** @description Default Response */
                502: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            status_code: number;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/legacy/retrieve_conversations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Earlier generation: the thread's messages, chronological, page by page */
        post: {
            parameters: {
                query: {
                    limit: number;
                    page: number;
                    thread_id: string;
                };
                header: {
                    /** @description API key or thread token, raw or as `Bearer <credential>` */
                    authorization: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            messages: {
                                conversation_id: string;
                                message: string;
                                message_id: string;
                                role: "user" | "AI";
                            }[];
                            pagination: {
                                current_page: number;
                                total_items: number;
                                total_pages: number;
                            };
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Prometheus metrics */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": string;
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Readiness: the database answers; the offline speech engines are listed, a missing one as degraded */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            speech?: {
                                detail?: string;
                                engine: string;
                                ok: boolean;
                            }[];
                            status: string;
                        };
                    };
                };
                /** @description Error */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/recordings/{file}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A call's WAV recording at its signed URL, with Range support
         * @description `{call_id}.wav?expires=…&signature=…` as `recording_url` gives it. A tampered or expired link is 403.
         */
        get: {
            parameters: {
                query?: {
                    expires?: string;
                    signature?: string;
                };
                header?: never;
                path: {
                    file: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description audio/wav */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": string;
                    };
                };
                /** @description audio/wav */
                206: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": string;
                    };
                };
                /** @description Error */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                416: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/simulations/{simulation_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A stored simulation run (POST /chat with `simulate.create: true`), with its turns and evaluation */
        get: {
            parameters: {
                query?: never;
                header: {
                    /** @description API key or thread token, raw or as `Bearer <credential>` */
                    authorization: string;
                };
                path: {
                    simulation_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            config_version_id: string;
                            /** Format: date-time */
                            created_at: string;
                            evaluation?: {
                                criteria: {
                                    key: string;
                                    passed: boolean;
                                    reasoning: string;
                                    score: number;
                                }[];
                                judge: "llm" | "heuristic";
                                /** @description Why the heuristic judge stands in for the model's, when the model judge failed */
                                note?: string;
                                score: number;
                                verdict: "pass" | "fail";
                            };
                            id: string;
                            project_name: string;
                            simulate: {
                                agent_type: string | null;
                                behavioural_prompt: string | null;
                                create: boolean;
                                evaluate: boolean;
                                industry: string | null;
                                initial_messages: string[];
                                max_turns: number;
                                topic: string | null;
                            };
                            source_thread_id: string;
                            stop_reason: "max_turns" | "user_ended" | "agent_ended";
                            thread_id: string;
                            turns: {
                                message: string;
                                role: "user" | "assistant";
                                source: "message" | "scripted" | "simulated" | "agent";
                            }[];
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/threads": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The organization's threads, newest first (keyset cursor pagination) */
        get: {
            parameters: {
                query: {
                    /** @description Opaque URL-safe Base64 cursor from a previous response */
                    cursor?: string;
                    limit: number;
                    /** @description Threads whose default project, or one of whose conversations' project, has this name */
                    project_name?: string;
                    type?: "NORMAL" | "SIMULATION";
                };
                header: {
                    /** @description API key or thread token, raw or as `Bearer <credential>` */
                    authorization: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            pagination: {
                                cursor: string | null;
                            };
                            threads: {
                                alias: string | null;
                                /** @description Calls placed or received on the thread */
                                call_count: number;
                                /** @description ISO 8601 */
                                created_at: string;
                                first_user_message: string | null;
                                id: string;
                                /** @description ISO 8601: the newest of the thread's creation, its newest message and its newest call */
                                last_activity_at: string;
                                /** @description Messages stored in the thread, spoken ones included */
                                message_count: number;
                                project_name: string | null;
                                timezone: string;
                                /** @description NORMAL or SIMULATION */
                                type: string;
                                usage: {
                                    billable_message_cost: number;
                                    billable_messages: number;
                                    total_cost: number;
                                    voice_cost: number;
                                    voice_minutes: number;
                                };
                            }[];
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        /** Create a thread */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description API key or thread token, raw or as `Bearer <credential>` */
                    authorization: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description Unique in the organization */
                        alias?: string;
                        /** @description A JSON object, as a string, merged into the thread's context */
                        json_input?: string;
                        /** @description Default project of the thread */
                        project_name?: string;
                        /**
                         * @description IANA timezone name
                         * @default UTC
                         */
                        timezone: string;
                        /** @default NORMAL */
                        type: "NORMAL" | "SIMULATION";
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            thread_id: string;
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/threads/{thread_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Thread details and usage */
        get: {
            parameters: {
                query?: never;
                header: {
                    /** @description API key or thread token, raw or as `Bearer <credential>` */
                    authorization: string;
                };
                path: {
                    thread_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            alias: string | null;
                            id: string;
                            timezone: string;
                            usage: {
                                billable_message_cost: number;
                                billable_messages: number;
                                total_cost: number;
                                voice_cost: number;
                                voice_minutes: number;
                            };
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** Set or clear (null) the thread's alias */
        patch: {
            parameters: {
                query?: never;
                header: {
                    /** @description API key or thread token, raw or as `Bearer <credential>` */
                    authorization: string;
                };
                path: {
                    thread_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        alias: string | null;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            alias: string | null;
                            id: string;
                            timezone: string;
                            usage: {
                                billable_message_cost: number;
                                billable_messages: number;
                                total_cost: number;
                                voice_cost: number;
                                voice_minutes: number;
                            };
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
            };
        };
        trace?: never;
    };
    "/threads/{thread_id}/json-input": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Merge JSON input into the thread's context */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description API key or thread token, raw or as `Bearer <credential>` */
                    authorization: string;
                };
                path: {
                    thread_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        json_input: string;
                        project_name: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            response: string;
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/threads/{thread_id}/messages": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A page of the thread's messages (keyset cursor pagination, chronological within the page) */
        get: {
            parameters: {
                query: {
                    /** @description Opaque URL-safe Base64 cursor from a previous response */
                    cursor?: string;
                    limit: number;
                    /** @description false: messages older than the cursor; true: newer */
                    newer: boolean;
                };
                header: {
                    /** @description API key or thread token, raw or as `Bearer <credential>` */
                    authorization: string;
                };
                path: {
                    thread_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            is_locked: boolean;
                            messages: {
                                conversation_end_time: string | null;
                                conversation_id: number;
                                extras: {
                                    [key: string]: unknown;
                                };
                                message: string;
                                message_id: string;
                                role: string;
                                /** @description Unix milliseconds */
                                timestamp: number;
                            }[];
                            pagination: {
                                cursor: string | null;
                            };
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/threads/{thread_id}/messages/search": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Messages containing a text (case-insensitive), newest first, with context around each match */
        get: {
            parameters: {
                query: {
                    context: number;
                    /** @description Opaque URL-safe Base64 cursor from a previous response */
                    cursor?: string;
                    limit: number;
                    query: string;
                };
                header: {
                    /** @description API key or thread token, raw or as `Bearer <credential>` */
                    authorization: string;
                };
                path: {
                    thread_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            matches: {
                                context: {
                                    conversation_end_time: string | null;
                                    conversation_id: number;
                                    message: string;
                                    message_id: string;
                                    role: string;
                                    /** @description Unix milliseconds */
                                    timestamp: number;
                                }[];
                                message_id: string;
                                next_cursor: string | null;
                                prev_cursor: string | null;
                            }[];
                            pagination: {
                                cursor: string | null;
                            };
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/threads/{thread_id}/token": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Issue a short-lived JWT scoped to the thread */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description API key or thread token, raw or as `Bearer <credential>` */
                    authorization: string;
                };
                path: {
                    thread_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            access_token: string;
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/threads/by-alias/{alias}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Thread details and usage, found by the thread's alias */
        get: {
            parameters: {
                query?: never;
                header: {
                    /** @description API key or thread token, raw or as `Bearer <credential>` */
                    authorization: string;
                };
                path: {
                    /** @description Unique in the organization */
                    alias: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            alias: string | null;
                            id: string;
                            timezone: string;
                            usage: {
                                billable_message_cost: number;
                                billable_messages: number;
                                total_cost: number;
                                voice_cost: number;
                                voice_minutes: number;
                            };
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/voice/{thread_id}/phone-call": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create a phone call for a thread, now or at `scheduled_for`
         * @description `callee` in E.164 or an international format with its country code. A project with several phone numbers needs `voice_provider_account_id`. One active (queued, scheduled or ongoing) phone call per thread: a second is 409.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description API key or thread token, raw or as `Bearer <credential>` */
                    authorization: string;
                };
                path: {
                    thread_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        appointment_opening_id?: string | null;
                        callee: string;
                        /** Format: uuid */
                        project_id: string;
                        scheduled_for?: string | null;
                        verification_code?: string | null;
                        voice_provider_account_id?: string | null;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            call_type: string;
                            duration_ms: number | null;
                            end_timestamp: number | null;
                            from_number: string | null;
                            id: string;
                            scheduled_for: string | null;
                            start_timestamp: number | null;
                            status: string;
                            to_number: string | null;
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
                /** @description Error */
                502: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
            };
        };
        /**
         * End the thread's active phone call
         * @description An ongoing call ends as `manual_stopped`; a scheduled or queued one is cancelled (`cancelled`).
         */
        delete: {
            parameters: {
                query?: never;
                header: {
                    /** @description API key or thread token, raw or as `Bearer <credential>` */
                    authorization: string;
                };
                path: {
                    thread_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            response: string;
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/voice/{thread_id}/web-call": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create a web call for a thread
         * @description The call is queued; when it is ready the thread's events WebSocket (`GET /threads/{thread_id}/events`) delivers `{"type":"web_call.ready","call_id","access_token","seq"}`, and the client joins `GET /calls/{call_id}/ws?token=…`.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description API key or thread token, raw or as `Bearer <credential>` */
                    authorization: string;
                };
                path: {
                    thread_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** Format: uuid */
                        project_id: string;
                        voice_provider_account_id?: string | null;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            message: string;
                            status: string;
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
                /** @description Error */
                502: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/voice/simulated/inbound": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Play a simulated caller into the project's first number
         * @description The project answers as it would a real caller (`voice.inbound`): the call is `ongoing` on the caller's thread (found by the alias `from`, or created with it), the agent greets, and the project's `voice.simulated` script is the caller's side.
         */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description API key or thread token, raw or as `Bearer <credential>` */
                    authorization: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description The caller's number, E.164 or international with its country code */
                        from: string;
                        /** Format: uuid */
                        project_id: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            call_type: string;
                            direction: string | null;
                            from_number: string | null;
                            id: string;
                            status: string;
                            thread_id: string;
                            to_number: string | null;
                        };
                    };
                };
                /** @description Error */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Error */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: string;
                        };
                    };
                };
                /** @description Validation Error */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            detail: {
                                ctx?: {
                                    [key: string]: unknown;
                                };
                                input: unknown;
                                loc: (string | number)[];
                                msg: string;
                                type: string;
                            }[];
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: never;
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export type operations = Record<string, never>;
