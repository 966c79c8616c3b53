/** A tool the agent can call: a name, a description, JSON-schema parameters and an async execute. */

/** The JSON-schema subset tools declare (validated with a JSON-schema validator before execute). */
export interface JsonSchema {
  type?: 'object' | 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'null';
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  description?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  additionalProperties?: boolean | JsonSchema;
  default?: unknown;
}

export interface ToolResult {
  /** Text shown to the policy as the observation. */
  content: string;
  success: boolean;
  /** Optional process reward for this call. */
  reward?: number;
}

export interface Tool<Args = Record<string, unknown>> {
  name: string;
  description: string;
  parameters: JsonSchema;
  execute(args: Args): Promise<ToolResult>;
  /** Optional batched form: many calls at once (e.g. one retrieval pass for the whole batch). */
  executeBatch?(calls: Args[]): Promise<ToolResult[]>;
}
